"""Big sessions in bounded memory: a loaded 100 MB session's daemon RSS, and another client's
latency while it is replayed and paged.

Two generated session files of about 100 MB each (under ``/tmp/agentd-bench-big``, reused;
never committed): *compacted*, a long session as auto-compaction leaves it (a compaction
about every MiB, so the model's context is the last MiB or so, the rest history), and *never
compacted*, whose whole branch is the model's context (a daemon must hold the context decoded:
that file is the worst case for memory, and the biggest replay).

Rows, on one real ``agentd serve --socket`` (the prober of :mod:`tests.bench.bench_loop_lag`
measures another client's ``daemon/status`` round trips during each load):

* the daemon's RSS with the compacted file loaded (budget: at most twice the file size), its growth
  over the daemon before the load, and the load's time;
* the same for the never-compacted file (no budget: it is the model's context, held decoded
  by the agent; reported so the cost is known);
* another client's p99 with the daemon idle (the floor of this machine, for comparison), and
  during ``session/load {replay}`` of the never-compacted file (every
  message as an event: about 100 MB of frames) and during ``session/messages`` of all its
  pages (budget: p99 ≤ 50 ms).

Run: ``python -m tests.bench.bench_big_session``. ``AGENTD_BENCH_SMOKE=1``: 1 MiB files.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from functools import partial
from pathlib import Path

import msgspec

from agentctl.client import connect
from agentd.protocol.content import Message
from agentd.protocol.session_file import (
    SESSION_VERSION,
    CompactionEntry,
    Entry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
)
from tests.bench import smoke
from tests.bench.bench_loop_lag import Daemon, Row, _lag
from tests.bench.bench_store import _Conversation
from tests.bench.smoke import size
from tests.harness import wait_until_async

DATA = smoke.data_dir("big")  # a smoke run gets a folder of its own (side-by-side runs)
FILE_BYTES = size(100 * 2**20, 2**20)
COMPACT_EVERY = size(2**20, 64 * 2**10)
"""Bytes of turns between two compactions in the compacted file."""
VERSION = f"2-{FILE_BYTES}-{COMPACT_EVERY}"
STAMP = "2026-01-01T00:00:00.000Z"

_encode = msgspec.json.Encoder().encode


def _write(path: Path, session_id: str, cwd: Path, *, compact: bool) -> None:
    """A session file (the current format version: an older one would be migrated on load,
    which is not what is measured) of about :data:`FILE_BYTES` of realistic turns
    (bench_store's), with a compaction every :data:`COMPACT_EVERY` bytes when ``compact``."""
    conversation = _Conversation(7)
    header = SessionHeader(version=SESSION_VERSION, id=session_id, cwd=str(cwd), created_at=STAMP)
    parent: str | None = None
    since_compaction = 0
    n = 0
    with path.open("wb") as out:
        out.write(_encode(header) + b"\n")

        def put(entry: Entry) -> None:
            nonlocal parent, since_compaction, n
            n += 1
            line = _encode(msgspec.structs.replace(entry, id=f"e{n}", parent_id=parent,
                                                   timestamp=STAMP))  # fmt: skip
            out.write(line + b"\n")
            parent, since_compaction = f"e{n}", since_compaction + len(line) + 1

        put(ModelChangeEntry(provider="mock", model="mock-model"))
        while out.tell() < FILE_BYTES:
            turn: list[Message] = conversation.turn()
            first_of_turn = f"e{n + 1}"
            for message in turn:
                put(MessageEntry(message=msgspec.structs.replace(message, provider="mock")
                                 if hasattr(message, "provider") else message))  # fmt: skip
            if compact and since_compaction >= COMPACT_EVERY:
                put(CompactionEntry(summary=f"summary up to turn {conversation.count}",
                                    first_kept_entry_id=first_of_turn))  # fmt: skip
                since_compaction = 0


def _data() -> tuple[Path, Path]:
    """The sessions folder and the cwd, generated once per :data:`VERSION`."""
    sessions, cwd = DATA / "sessions", DATA / "work"
    stamp = DATA / "version"
    if not (stamp.is_file() and stamp.read_text() == VERSION):
        shutil.rmtree(DATA, ignore_errors=True)
        folder = sessions / "bench"
        folder.mkdir(parents=True)
        cwd.mkdir()
        for session_id, compact in (("compacted", True), ("flat", False)):
            _write(folder / f"{STAMP.replace(':', '-')}_{session_id}.jsonl", session_id, cwd,
                   compact=compact)  # fmt: skip
        stamp.write_text(VERSION)
    return sessions, cwd


def _mib(path: Path) -> float:
    return path.stat().st_size / 2**20


async def _loaded_rss(daemon: Daemon, session_id: str, file_mib: float, label: str) -> Row:
    """Load ``session_id``; the daemon's RSS then (and its growth, and the load's time)."""
    client = await connect(daemon.socket, autostart=False)
    try:
        before = daemon.rss_mib()
        started = time.perf_counter()
        await client.call("session/load", {"sessionId": session_id})
        took = time.perf_counter() - started
        await asyncio.sleep(0.5)  # the load's garbage freed
        rss = daemon.rss_mib()
    finally:
        await client.close()
    value = f"{rss:.0f} MiB ({rss / file_mib:.2f}×)"
    growth = f"+{rss - before:.0f} MiB, {took:.1f} s"
    name = f"daemon RSS, {label} {file_mib:.0f} MB session loaded ({growth})"
    return name, value, "≤ 2× the file" if label == "compacted" else "- (the context)"


async def _replay(daemon: Daemon, session_id: str) -> tuple[int, int]:
    """``session/load {replay}`` on a new connection, every frame counted; (frames, bytes)."""
    client = await connect(daemon.socket, autostart=False)
    counted = [0, 0]

    def count(_method: str, data: bytes) -> None:
        counted[0] += 1
        counted[1] += len(data)

    client.on_notification(count)
    try:
        await client.call("session/load", {"sessionId": session_id, "replay": True})
    finally:
        await client.close()
    return counted[0], counted[1]


async def _pages(daemon: Daemon, session_id: str) -> int:
    client = await connect(daemon.socket, autostart=False)
    try:
        return len(await client.messages(session_id))
    finally:
        await client.close()


async def _measure() -> list[Row]:
    sessions, cwd = _data()
    root = DATA / "run"
    shutil.rmtree(root, ignore_errors=True)
    daemon = Daemon(root, "--session-dir", str(sessions), "--idle-unload", "0")
    rows: list[Row] = []
    try:
        warm = await connect(daemon.socket, autostart=False)
        try:  # first-use imports (store, agent, mock provider) before the baseline
            sid = (await warm.call("session/new", {"cwd": str(cwd), "provider": "mock"}))[
                "sessionId"
            ]
            await warm.call("session/prompt", {"sessionId": sid, "text": "warm up"})
        finally:
            await warm.close()
        compacted = next(sessions.glob("bench/*_compacted.jsonl"))
        flat = next(sessions.glob("bench/*_flat.jsonl"))
        rows.append(await _loaded_rss(daemon, "compacted", _mib(compacted), "compacted"))
        rows.append(await _loaded_rss(daemon, "flat", _mib(flat), "never compacted"))
        idle = size(5, 1)
        label, value, _ = await _lag(
            daemon, f"the daemon idle ({idle} s)", partial(asyncio.sleep, idle)
        )
        rows.append((f"{label}: this machine's floor", value, "-"))
        replayed: list[tuple[int, int]] = []

        async def replay() -> None:
            replayed.append(await _replay(daemon, "flat"))

        label, value, budget = await _lag(
            daemon, f"replay of the {_mib(flat):.0f} MB session", replay
        )
        frames, size_bytes = replayed[0]
        rows.append((f"{label} [{frames:,} events, {size_bytes / 2**20:.0f} MB]", value, budget))
        paged: list[int] = []

        async def page_all() -> None:
            paged.append(await _pages(daemon, "flat"))

        label, value, budget = await _lag(daemon, "session/messages, all pages", page_all)
        rows.append((f"{label} [{paged[0]:,} messages]", value, budget))

        async def settled() -> bool:
            return await daemon.loaded_sessions() >= 2

        await wait_until_async(settled, 30, "the sessions loaded", 0.1)
        rows.append(("daemon RSS after the replay and the pages", f"{daemon.rss_mib():.0f} MiB",
                     "-"))  # fmt: skip
    finally:
        daemon.stop()
    return rows


def main() -> list[Row]:
    """The rows (``PYTHONDONTWRITEBYTECODE`` as the environment has it: no cold start here)."""
    print(f"  machine load: {os.getloadavg()[0]:.1f} (1 min)", file=sys.stderr)
    return asyncio.run(_measure())


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
