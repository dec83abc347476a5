"""Budget of ``agentd mcp``'s start: how soon an MCP host gets its ``initialize`` answered
(hosts time the start out: Codex's default is 10 s, and a host with ``required = true`` fails
its whole start on a slow server).

* ``initialize``: ``agentd mcp`` spawned, ``initialize`` written at once, until its answer;
  against the interpreter floor: a Python that imports the MCP SDK's server and answers
  (budget: ≤ 1.3 times the floor: the SDK's import is the floor, and nothing of the session
  layer, providers or structlog is imported before the answer).
* ``--shared, no daemon running``: the same with ``--shared`` in a home where no shared
  daemon runs (the daemon is started on the first tool call, not before the answer).

5 rounds, each measuring the three in a fresh home; medians. Run:
``python -m tests.bench.bench_mcp_start`` (or ``python -m tests.bench`` for every area).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time

from tests.bench.smoke import size
from tests.harness import IsolatedHome

Row = tuple[str, str, str]
ROUNDS = size(5)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
FLOOR = (
    "import sys\n"
    "import mcp.server.mcpserver\n"
    "sys.stdin.buffer.readline()\n"
    "sys.stdout.write('{}\\n')\n"
    "sys.stdout.flush()\n"
)


async def answered_after(home: IsolatedHome, *argv: str) -> float:
    """Seconds from spawning ``argv`` (stdin written at once) to its first stdout line."""
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv,
        env=home.env,
        cwd=home.project,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    line = await asyncio.wait_for(process.stdout.readline(), 60)
    took = time.perf_counter() - started
    if argv[-1] != FLOOR and "serverInfo" not in json.loads(line).get("result", {}):
        raise RuntimeError(f"not an initialize answer: {line[:200]!r}")
    process.stdin.close()
    await asyncio.wait_for(process.wait(), 60)
    return took


async def _measure() -> list[Row]:
    mcp: list[float] = []
    shared: list[float] = []
    floor: list[float] = []
    for _ in range(ROUNDS):
        home = IsolatedHome()
        try:
            floor.append(await answered_after(home, sys.executable, "-c", FLOOR))
            mcp.append(await answered_after(home, *home.agentd("mcp", "--provider", "mock")))
            argv = home.agentd("mcp", "--provider", "mock", "--shared")
            shared.append(await answered_after(home, *argv))
        finally:
            home.cleanup()
    ours, base, alone = (statistics.median(x) for x in (mcp, floor, shared))
    return [
        ("agentd mcp start → initialize answered (median of 5)", f"{ours * 1000:.0f} ms", "—"),
        ("  floor: python importing the MCP SDK's server", f"{base * 1000:.0f} ms", "—"),
        ("  agentd mcp / floor", f"{ours / base:.2f}×", "≤ 1.3×"),
        ("agentd mcp --shared, no daemon running → answered", f"{alone * 1000:.0f} ms", "—"),
        ("  --shared / floor", f"{alone / base:.2f}×", "≤ 1.3×"),
    ]


def main() -> list[Row]:
    """Measure ``agentd mcp``'s start; returns (measure, value, budget) rows."""
    return asyncio.run(_measure())


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
