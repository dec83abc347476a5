"""Session store budgets: resume a 100 MB session, list 1,000 sessions, append, idle memory.

Run: ``python -m tests.bench.bench_store``. Test data is generated once under
``/tmp/agentd-bench-store`` (about 330 MB) and reused while the generator version matches.
Loading runs in a fresh interpreter so its RSS growth is the load's alone. The daemon's
``session/load`` path (``load_session``: open, repair, messages, runtime) is timed on a copy
of the big session whose ``cwd`` exists, while another copy is already loaded.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentd.protocol.content import (
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from agentd.protocol.session_file import ModelChangeEntry, SessionInfoEntry
from agentd.store import SessionFile, find_session, list_sessions
from agentd.store.index import INDEX_NAME
from tests.bench import smoke
from tests.bench.smoke import size

DATA = smoke.data_dir("store")  # a smoke run gets a folder of its own (side-by-side runs)
BIG_BYTES = size(100 * 2**20, 2**20)
SESSIONS = size(1000, 60)  # more than the page of 50 listed
LARGE_SESSIONS = size(20, 2)
LARGE_BYTES = size(10 * 2**20, 2**18)
GENERATOR_VERSION = f"1-{BIG_BYTES}-{SESSIONS}-{LARGE_SESSIONS}-{LARGE_BYTES}"  # sizes too

Row = tuple[str, str, str]


# --- data -----------------------------------------------------------------------------------


def _text_pool(rng: random.Random) -> str:
    """1 MiB of word-like text with the characters JSON has to escape."""
    words = [
        "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(500)
    ]
    words += ["\n", "\t", '"quoted"', "path/to/file.py", "naïve", "→", "{x: 1}", "\\n"]
    return " ".join(rng.choices(words, k=200_000))[: 2**20]


class _Conversation:
    """Realistic turns: a prompt, a reply with a tool call, its result, a final answer."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.pool = _text_pool(self.rng)
        self.count = 0

    def _text(self, low: int, high: int) -> str:
        size = self.rng.randint(low, high)
        start = self.rng.randrange(0, len(self.pool) - size)
        return self.pool[start : start + size]

    def turn(self) -> list[Message]:
        self.count += 1
        n = self.count
        call = ToolCall(id=f"call{n}", name="bash", arguments={"command": self._text(20, 200)})
        usage = Usage(input_tokens=1000 + n, output_tokens=200, cost=0.001)
        return [
            UserMessage(id=f"u{n}", content=[TextContent(text=self._text(50, 400))], timestamp=n),
            AssistantMessage(
                id=f"a{n}",
                content=[TextContent(text=self._text(100, 800)), call],
                provider="anthropic",
                model="claude",
                usage=usage,
                stop_reason="tool_use",
                timestamp=n,
            ),
            ToolResultMessage(
                id=f"r{n}",
                tool_call_id=call.id,
                tool_name="bash",
                content=[TextContent(text=self._text(500, 12_000))],
                timestamp=n,
            ),
            AssistantMessage(
                id=f"b{n}",
                content=[TextContent(text=self._text(100, 1500))],
                provider="anthropic",
                model="claude",
                usage=usage,
                timestamp=n,
            ),
        ]


def _write_session(root: Path, session_id: str, target: int, seed: int, title: str) -> Path:
    conversation = _Conversation(seed)
    with SessionFile.create(
        root, cwd=f"/home/bench/project{seed % 37}", session_id=session_id
    ) as f:
        f.append(ModelChangeEntry(provider="anthropic", model="claude"))
        f.append(SessionInfoEntry(title=title))
        while f.path.stat().st_size < target:
            for message in conversation.turn():
                f.append_message(message)
    return f.path


def ensure_data() -> tuple[Path, Path]:
    """The 100 MB session's path and the 1,000-session root (generated if missing)."""
    stamp = DATA / "version"
    if not (stamp.is_file() and stamp.read_text() == GENERATOR_VERSION):
        shutil.rmtree(DATA, ignore_errors=True)
        _write_session(DATA / "big", "big", BIG_BYTES, 1, "The big one")
        many = DATA / "many"
        for n in range(SESSIONS):
            size = LARGE_BYTES if n < LARGE_SESSIONS else 20_000
            _write_session(many, f"s{n:04d}", size, n, f"Session number {n}")
        stamp.write_text(GENERATOR_VERSION)
    big = find_session(DATA / "big", "big")
    assert big is not None
    return big, DATA / "many"


# --- measures -------------------------------------------------------------------------------

_LOAD_PROBE = """
import json, sys, time
from pathlib import Path

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024

from agentd.store import SessionFile
from agentd.protocol.content import TextContent, ToolCall
import msgspec
before = status("VmRSS:")
start = time.perf_counter()
session = SessionFile.open(Path(sys.argv[1]))
seconds = time.perf_counter() - start
after, peak = status("VmRSS:"), status("VmHWM:")
content = 0
for message in session.messages():
    for block in message.content:
        if isinstance(block, TextContent):
            content += len(block.text.encode())
        elif isinstance(block, ToolCall):
            content += len(msgspec.json.encode(block.arguments))
print(json.dumps({"seconds": seconds, "before": before, "after": after, "peak": peak,
                  "content": content, "entries": len(session.entries())}))
"""


def _load(big: Path) -> list[Row]:
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _LOAD_PROBE, str(big)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        for _ in range(3)
    ]
    best = min(runs, key=lambda run: run["seconds"])
    mb = big.stat().st_size / 2**20
    content = best["content"]
    return [
        (
            f"load {mb:.0f} MB session ({best['entries']} entries)",
            f"{best['seconds']:.3f} s",
            "≤ 1 s",
        ),
        (
            "  RSS growth after load / message content",
            f"{(best['after'] - best['before']) / content:.2f}×",
            "≤ 3×",
        ),
        (
            "  peak RSS growth during load / message content",
            f"{(best['peak'] - best['before']) / content:.2f}×",
            "≤ 3×",
        ),
    ]


_DAEMON_PROBE = """
import asyncio, json, sys, time
from pathlib import Path
from agentd.session.factory import load_session
from agentd.session.shared import SharedResources
from agentd.protocol.session_file import ModelChangeEntry
from agentd.store import SessionFile

async def main():
    services = SharedResources(session_dir=Path(sys.argv[1]))
    for old in services.session_root.glob("*/*_warm.jsonl"):
        old.unlink()
    with SessionFile.create(services.session_root, cwd=sys.argv[3], session_id="warm") as f:
        f.append(ModelChangeEntry(provider="anthropic", model="claude"))
    await load_session(services, session_id="warm")  # imports and the HTTP client, once
    resident = await load_session(services, session_id=sys.argv[4])  # another big one loaded
    start = time.perf_counter()
    runtime = await load_session(services, session_id=sys.argv[2])
    seconds = time.perf_counter() - start
    assert len(runtime.agent.messages) == len(resident.agent.messages)
    print(json.dumps({"seconds": seconds}))
    await services.close()

asyncio.run(main())
"""


def _daemon_copy(big: Path) -> tuple[Path, Path]:
    """Two copies of the big session whose ``cwd`` exists (the daemon checks it), made once:
    ``bigd`` is the one timed, ``bigr`` the one resident meanwhile (a session file is locked
    by the process that loaded it, so the same one cannot be loaded twice)."""
    root, cwd = DATA / "daemon", DATA / "daemon-cwd"
    cwd.mkdir(exist_ok=True)
    if find_session(root, "bigd") is None or find_session(root, "bigr") is None:
        shutil.rmtree(root, ignore_errors=True)
        folder = root / "x"
        folder.mkdir(parents=True)
        for copy_id in ("bigd", "bigr"):
            with big.open("rb") as source:
                header = json.loads(source.readline())
                header.update(cwd=str(cwd), id=copy_id)
                with (folder / big.name.replace("_big.", f"_{copy_id}.")).open("wb") as copy:
                    copy.write(json.dumps(header, separators=(",", ":")).encode() + b"\n")
                    shutil.copyfileobj(source, copy, 8 << 20)
    return root, cwd


def _daemon_load(big: Path) -> list[Row]:
    """The daemon's path: ``load_session`` (open, repair_interrupted, messages, runtime)."""
    root, cwd = _daemon_copy(big)
    env = {**os.environ, "ANTHROPIC_API_KEY": "bench-key-never-sent"}
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _DAEMON_PROBE, str(root), "bigd", str(cwd), "bigr"],
                check=True,
                capture_output=True,
                text=True,
                env=env,
            ).stdout
        )
        for _ in range(3)
    ]
    best = min(run["seconds"] for run in runs)
    return [
        (
            "  same, daemon session/load path, another 100 MB session loaded",
            f"{best:.3f} s",
            "≤ 1 s",
        )
    ]


def _list(many: Path) -> list[Row]:
    (many / INDEX_NAME).unlink(missing_ok=True)
    cold = _timed(lambda: list_sessions(many, limit=50))
    (many / INDEX_NAME).unlink(missing_ok=True)
    everything = _timed(lambda: list_sessions(many, limit=SESSIONS))
    warm_runs = [_timed(lambda: list_sessions(many, limit=50)) for _ in range(5)]
    items, _ = list_sessions(many, limit=50)
    assert len(items) == 50
    large_mb = LARGE_BYTES * LARGE_SESSIONS / 2**20
    return [
        (
            f"list {SESSIONS} sessions ({large_mb:.0f} MB in {LARGE_SESSIONS} large), index warm",
            f"{statistics.median(warm_runs) * 1000:.1f} ms",
            "≤ 300 ms",
        ),
        ("  same, no index (first page of 50 summarised)", f"{cold * 1000:.0f} ms", "≤ 300 ms"),
        (
            f"  no index, one page of all {SESSIONS} (every file summarised)",
            f"{everything * 1000:.0f} ms",
            "-",
        ),
    ]


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _append() -> list[Row]:
    root = DATA / "append"
    shutil.rmtree(root, ignore_errors=True)
    conversation = _Conversation(7)
    messages = [message for _ in range(500) for message in conversation.turn()]
    timings = []
    with SessionFile.create(root, cwd="/home/bench/append", secrets={"bench-secret-value"}) as f:
        for message in messages:
            start = time.perf_counter_ns()
            f.append_message(message)
            timings.append(time.perf_counter_ns() - start)
    timings.sort()
    median = statistics.median(timings) / 1000
    p99 = timings[int(len(timings) * 0.99)] / 1000
    return [
        (f"append, median of {len(timings)} (no fsync)", f"{median:.1f} µs", "≤ 50 µs"),
        ("  append p99 (12 KB tool results)", f"{p99:.1f} µs", "-"),
    ]


def _idle_memory() -> list[Row]:
    root = DATA / "idle"
    shutil.rmtree(root, ignore_errors=True)
    paths = []
    for n in range(50):
        with SessionFile.create(root, cwd="/home/bench/idle", session_id=f"i{n}") as f:
            f.append(ModelChangeEntry(provider="anthropic", model="claude"))
            f.append(SessionInfoEntry(title="idle"))
        paths.append(f.path)
    tracemalloc.start()
    loaded: list[Any] = [SessionFile.open(path) for path in paths]
    current, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    per_session = current / len(loaded)
    return [
        ("memory per idle loaded session (no messages)", f"{per_session / 1024:.1f} KiB", "≤ 1 MiB")
    ]


def main() -> list[Row]:
    """Measure every store budget; returns (measure, value, budget) rows."""
    big, many = ensure_data()
    return [*_load(big), *_daemon_load(big), *_list(many), *_append(), *_idle_memory()]


if __name__ == "__main__":
    rows = main()
    width = max(len(row[0]) for row in rows)
    for measure, value, budget in rows:
        print(f"{measure:<{width}}  {value:>12}  {budget}")
