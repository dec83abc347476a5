"""Event-loop stalls while a stdio MCP server answers with big results.

One real server process (:mod:`tests.mcp.oversize_server`) on one
:class:`~agentd.mcp.connection.Connection` in this process. While each call runs, a ticker
task sleeps 1 ms at a time and records how late it wakes; the row is the longest wait: how
long every other client of a daemon would have waited for that result. A result over the
stdio limit (16 MiB) is refused, not decoded. (Decoding in a worker thread was measured here
and made the stall longer: msgspec holds the interpreter lock while it decodes.)

Run: ``python -m tests.bench.bench_mcp_big`` (or ``python -m tests.bench`` for every area).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from agentd.mcp.connection import CallFailed, Connection
from agentd.mcp.servers import ServerDef
from tests.bench import smoke

HOSTILE = Path(__file__).parents[1] / "mcp" / "oversize_server.py"
SIZES_MIB = (3,) if smoke.enabled() else (3, 12, 60)
Row = tuple[str, str, str]


async def _stall_during(connection: Connection, mib: int) -> tuple[float, str]:
    """The longest event-loop stall (seconds) during a call answered with ``mib`` MiB."""
    worst = 0.0

    async def tick() -> None:
        nonlocal worst
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            worst = max(worst, time.perf_counter() - before - 0.001)

    ticker = asyncio.create_task(tick())
    try:
        await connection.call("big", {"mib": mib}, 600)
        outcome = "answered"
    except CallFailed:
        outcome = "refused"
    finally:
        ticker.cancel()
    return worst, outcome


async def _measure() -> list[Row]:
    definition = ServerDef(name="h", source="bench", command=sys.executable, args=(str(HOSTILE),))
    with tempfile.TemporaryDirectory() as cwd:
        connection = Connection(definition, Path(cwd), dict(os.environ), lambda: None, print)
        await connection.start()
        rows: list[Row] = []
        try:
            for mib in SIZES_MIB:
                stall, outcome = await _stall_during(connection, mib)
                rows.append(
                    (f"loop stall, {mib} MiB result ({outcome})", f"{stall * 1000:.0f} ms", "—")
                )
        finally:
            await connection.stop()
    return rows


def main() -> list[Row]:
    rows = asyncio.run(_measure())
    for row in rows:
        print(" | ".join(row))
    return rows


if __name__ == "__main__":
    main()
