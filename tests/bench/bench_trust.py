"""Trust budgets: the content-pinned ``.mcp.json`` check a session start makes (≤ 1 ms),
and the pinned project folders (custom commands, agent profiles) each check reads.

Each measure is what a session start in a trusted project pays, in this process, on real
files: find the ``.mcp.json``, read it, hash it, read the trust list, compare the pin, parse
the servers (:func:`agentd.mcp.servers.gather`, no server started); for a folder, read and
hash its tree (:func:`agentd.config.trust.checked_folder`). Median and p95 of 500 runs.

Run: ``python -m tests.bench.bench_trust``.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentd.config.trust import checked_folder
from agentd.mcp.servers import gather
from agentd.protocol.trust_list import add_trusted
from tests.bench.smoke import size

Row = tuple[str, str, str]
RUNS = size(500, 5)


def _project(root: Path) -> tuple[Path, dict[str, str]]:
    """A trusted project with a 5-server ``.mcp.json`` and 20 commands and 10 profiles; a
    trust list of 50 folders (a user who trusted many projects)."""
    env = {"HOME": str(root), "XDG_CONFIG_HOME": str(root / "xdg")}
    project = root / "src" / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "pkg" / "sub").mkdir(parents=True)
    servers = {
        f"server{i}": {"command": sys.executable, "args": ["-m", f"tool{i}", "--stdio"]}
        for i in range(5)
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
    commands = project / ".agentd" / "commands"
    agents = project / ".agentd" / "agents"
    commands.mkdir(parents=True)
    agents.mkdir()
    for index in range(20):
        (commands / f"cmd{index}.md").write_text(f"---\ndescription: c{index}\n---\n" + "x" * 800)
    for index in range(10):
        (agents / f"a{index}.md").write_text(f"---\nname: a{index}\ndescription: d\n---\nBody")
    for index in range(50):
        other = root / "other" / str(index)
        other.mkdir(parents=True)
        add_trusted(other, env)
    add_trusted(project, env)
    return project, env


def _timed(work: Callable[[], object]) -> tuple[float, float]:
    work()
    timings = []
    for _ in range(RUNS):
        start = time.perf_counter()
        work()
        timings.append((time.perf_counter() - start) * 1000)
    return statistics.median(timings), statistics.quantiles(timings, n=20)[-1]


def main() -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        project, env = _project(Path(tmp))
        cwd = project / "pkg" / "sub"
        found = gather({}, cwd, None, env)
        assert len(found.servers) == 5, found.warnings
        median, p95 = _timed(lambda: gather({}, cwd, None, env))
        measure = "content-pinned .mcp.json check per session start (5 servers, 50 trusted)"
        rows += [(f"{measure}, median", f"{median:.3f} ms", "≤ 1 ms")]
        rows += [(f"{measure}, p95", f"{p95:.3f} ms", "—")]
        (project / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
        changed = gather({}, cwd, None, env)
        assert not changed.servers
        assert changed.warnings
        median, _ = _timed(lambda: gather({}, cwd, None, env))
        rows.append(
            ("the same, .mcp.json changed since (warning), median", f"{median:.3f} ms", "—")
        )
        for kind, count in (("commands", 20), ("agents", 10)):
            folder = project / ".agentd" / kind
            assert checked_folder(folder, env)[0] == "trusted"
            median, _ = _timed(lambda folder=folder: checked_folder(folder, env))  # type: ignore[misc]
            rows.append(
                (f"pinned .agentd/{kind}/ check ({count} files), median", f"{median:.3f} ms", "—")
            )
    return rows


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
