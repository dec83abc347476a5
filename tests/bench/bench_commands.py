"""Custom commands: what reading the command files and expanding a ``/name`` prompt cost.

``python -m tests.bench.bench_commands`` prints the table. The issue names no budget; these
numbers back the choice of reading the files again on every call instead of watching them.

- *scan 50 files*: :func:`agentd.config.commands.load_commands` over 25 user and 25 project
  command files (a trusted project), in this process. Median of 200.
- *session/commands*: the round trip over a real ``agentd serve --stdio`` with those files.
  Median of 50.
- *prompt, plain vs /command*: a ``session/prompt`` answered by the built-in mock model,
  sent as plain text and as a command expanding to the same text. Median of 20 each.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agentctl.client import spawn_stdio
from agentd.config.commands import load_commands
from agentd.protocol.trust_list import add_trusted
from tests.harness import isolated_env

Row = tuple[str, str, str]


def _files(root: Path) -> tuple[Path, dict[str, str]]:
    env = isolated_env(root)
    project = root / "proj"
    (project / ".git").mkdir(parents=True)
    folders = [
        Path(env["XDG_CONFIG_HOME"]) / "agentd" / "commands",
        project / ".agentd" / "commands",
    ]
    for n, folder in enumerate(folders):
        folder.mkdir(parents=True)
        for i in range(25):
            (folder / f"cmd{n}-{i}.md").write_text(
                f"---\ndescription: command {i}\nargument-hint: FILE\n---\nLook at $1 ({i}).\n"
            )
    (folders[0] / "hello.md").write_text("hello world")
    add_trusted(project, env)
    return project, env


def _median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.2f} ms"


async def _over_stdio(project: Path, env: dict[str, str]) -> list[Row]:
    client = await spawn_stdio(env=env, cwd=str(project))
    try:
        info = await client.call("session/new", {"cwd": str(project), "provider": "mock"})
        sid = info["sessionId"]
        listing = []
        for _ in range(50):
            start = time.perf_counter()
            await client.call("session/commands", {"sessionId": sid})
            listing.append(time.perf_counter() - start)
        timings: dict[str, list[float]] = {"hello world": [], "/hello": []}
        for _ in range(20):
            for text, samples in timings.items():
                start = time.perf_counter()
                await client.call("session/prompt", {"sessionId": sid, "text": text})
                samples.append(time.perf_counter() - start)
    finally:
        await client.close()
    return [
        ("session/commands round trip (51 files)", _median_ms(listing), "—"),
        ("session/prompt, plain text (mock model)", _median_ms(timings["hello world"]), "—"),
        ("session/prompt, /command expanding to it", _median_ms(timings["/hello"]), "—"),
    ]


def main() -> list[Row]:
    root = Path(tempfile.mkdtemp(prefix="bench-commands-"))
    try:
        project, env = _files(root)
        scans = []
        for _ in range(200):
            start = time.perf_counter()
            found = load_commands(project, env)
            scans.append(time.perf_counter() - start)
        assert len(found.commands) == 51, found.warnings
        rows = [("scan 51 command files (in process)", _median_ms(scans), "—")]
        return rows + asyncio.run(_over_stdio(project, env))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    for measure, value, budget in main():
        print(f"{measure:<45} {value:>12}  {budget}")
