"""Loop lag and descriptors under the session-level floods of issue 27 (one real
``agentd serve --socket``, the prober of :mod:`tests.bench.bench_loop_lag`).

* ``follow-up flood``: 3,000 ``session/followUp`` at once on a running session (the queue
  takes 64, the rest are refused); before the cap, each accepted text re-sent the whole queue
  and the flood stalled every client for 13 s;
* ``session/messages of 200 MB``: the whole branch of the 200 MB bench session, page by page
  (``agentctl``'s ``messages``), the session already loaded; before paging, one answer took
  70 s and stalled other clients 4.5 s. The time to the first (newest) page is in its own row;
* ``2,000 session/new on one connection``: the connection stays subscribed to all of them;
  the daemon's descriptors once the unloader has come down to ``--max-loaded-sessions 64``
  (before, subscribed sessions were never unloaded: 2,010 descriptors).

Run: ``python -m tests.bench.bench_session_limits [flood]`` (``flood``: that row only).
Budget for the lag rows: p99 ≤ 50 ms.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time

from agentctl.client import AgentClient, connect
from agentd.errors import SessionBusy
from tests.bench.bench_loop_lag import DATA, Daemon, Row, _big_session, _lag
from tests.bench.smoke import size
from tests.harness import wait_until_async

FLOOD = size(3000, 100)
SESSIONS = size(2000, 200)
MAX_LOADED = 64


async def _start_nap(client: AgentClient, cwd: str) -> tuple[str, asyncio.Task[object]]:
    """A session whose run naps in bash (a warm-up prompt first, so first-use imports are
    not measured); returns its id and the pending prompt."""
    params = {"cwd": cwd, "provider": "mock"}
    warm = await client.call("session/new", params)
    await client.call("session/prompt", {"sessionId": warm["sessionId"], "text": "warm up"})
    sid = (await client.call("session/new", params))["sessionId"]
    text = {"sessionId": sid, "text": "bench nap"}
    prompt: asyncio.Task[object] = asyncio.create_task(client.call("session/prompt", text))

    async def running() -> bool:
        return (await client.call("session/state", {"sessionId": sid}))["status"] == "running"

    await wait_until_async(running, 30, "the run to start", 0.05)
    return sid, prompt


async def _flood(client: AgentClient, sid: str) -> tuple[int, int]:
    """``FLOOD`` follow-ups at once on the running session; returns (accepted, refused)."""
    calls = (
        client.call("session/followUp", {"sessionId": sid, "text": f"m{n}"}) for n in range(FLOOD)
    )
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    refused = sum(isinstance(o, SessionBusy) for o in outcomes)
    return FLOOD - refused, refused


async def _many_sessions(daemon: Daemon, cwd: str) -> Row:
    client = await connect(daemon.socket, autostart=False)
    try:
        params = {"cwd": cwd, "provider": "mock"}
        for _ in range(SESSIONS // 100):
            await asyncio.gather(*(client.call("session/new", params) for _ in range(100)))

        async def capped() -> bool:
            return await daemon.loaded_sessions() <= MAX_LOADED

        await wait_until_async(capped, 60, "the loaded sessions down to the cap", 0.1)
        fds = daemon.fds()
    finally:
        await client.close()
    label = f"daemon fds after {SESSIONS:,} session/new on one subscribed connection"
    return label, f"{fds} fds", f"bounded (--max-loaded-sessions {MAX_LOADED})"


async def _measure(only: str | None = None) -> list[Row]:
    work = DATA / "work"
    work.mkdir(parents=True, exist_ok=True)
    sessions = DATA / "sessions"
    print("  preparing the 200 MB session (first run only) ...", file=sys.stderr)
    big = _big_session(sessions, work)
    for folder in sessions.glob("*"):
        if folder.name != "bench":
            shutil.rmtree(folder)
    root = DATA / "run-limits"
    shutil.rmtree(root, ignore_errors=True)
    flags = ["--session-dir", str(sessions), "--max-loaded-sessions", str(MAX_LOADED)]
    daemon = Daemon(root, *flags, "--idle-unload", "0")
    rows: list[Row] = []
    try:
        client = await connect(daemon.socket, autostart=False)
        try:
            counts: list[tuple[int, int]] = []
            sid, nap = await _start_nap(client, str(work))

            async def flood() -> None:
                counts.append(await _flood(client, sid))

            label, value, budget = await _lag(daemon, f"{FLOOD:,} follow-ups at once", flood)
            await client.call("session/cancel", {"sessionId": sid})
            await nap
            accepted, refused = counts[0]
            rows.append((f"{label} [{accepted} queued, {refused} refused]", value, budget))
            if only == "flood":
                return rows
            await client.call("session/load", {"sessionId": big})
            started = time.perf_counter()
            first = await client.call("session/messages", {"sessionId": big})
            took = (time.perf_counter() - started) * 1000
            rows.append(("session/messages of 200 MB: the newest page", f"{took:.0f} ms",
                         f"{len(first['messages'])} of {first['total']} messages"))  # fmt: skip
            every: list[int] = []

            async def page_all() -> None:
                every.append(len(await client.messages(big)))

            label, value, budget = await _lag(
                daemon, "session/messages of 200 MB, all pages", page_all
            )
            rows.append((f"{label} [{every[0]:,} messages]", value, budget))
        finally:
            await client.close()
        rows.append(await _many_sessions(daemon, str(work)))
    finally:
        daemon.stop()
    return rows


def main(only: str | None = None) -> list[Row]:
    return asyncio.run(_measure(only))


if __name__ == "__main__":
    for row in main(sys.argv[1] if len(sys.argv) > 1 else None):
        print(" | ".join(row))
