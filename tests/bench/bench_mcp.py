"""Budgets of MCP servers' tools (issue: "MCP both ways").

* ``call overhead``: the test server's ``add`` tool (stdio) called 500 times with the SDK's
  own client (the server's time, pipes and SDK included) and 500 times through agentd's path
  (:class:`agentd.mcp.tools.McpTool`: the pooled connection, the call, the result converted);
  medians and their difference (budget: ≤ 2 ms over the server's own time).
* ``first session``: the server alone started with the SDK (spawn, ``initialize``,
  ``tools/list``), and a real ``agentd --stdio`` daemon's first session with that server
  against one without it: ``session/new`` and a run of two model calls and one tool call
  (``mcp__t__add`` against the built-in ``ls``); the difference minus the server's own start
  (budget: ≤ 50 ms). 5 rounds, each measuring the three in turn; the median of the rounds.
* ``1,000 calls``: a socket daemon's RSS after 100 warm-up MCP calls and after 1,000 more
  (20 runs of 50 calls) (budget: growth ≤ 5 MiB); the same with the built-in ``ls`` shows
  what the session itself grows by, and the difference what MCP adds. Measured with
  tracemalloc in the daemon (1,000 calls): the Python heap grows 1.9 MiB with MCP calls,
  1.75 MiB with ``ls`` — the conversation (messages, call ids, each result's details), the
  replay buffer (bounded: 512 KiB of frames) and the session file's index; the rest of the
  RSS growth is the allocator's high-water mark of the request bodies, which grow with the
  conversation. (It was +28 MiB for both until the in-process mock LLM stopped keeping its
  last 100 request bodies, each holding the whole conversation.)
* ``without servers``: modules of ``agentd.mcp`` and of the SDK imported by a daemon that ran
  a session without MCP servers (budget: none).

Run: ``python -m tests.bench.bench_mcp`` (or ``python -m tests.bench`` for every area).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from tests.bench.smoke import size
from tests.harness import Home, new_session, run, socket_client, stdio_client, stop
from tests.mcp.conftest import SCENARIOS, SERVER, server_table, write_user_config
from tests.scenarios import tool_call

Row = tuple[str, str, str]
CALLS = size(500, 5)
MANY_LS = {
    "name": "bench-many-ls",
    "trigger": "bench-many-ls",
    "steps": [
        {"response": {"tool_calls": [tool_call("ls", {"path": "."}, f"c{i}") for i in range(50)]}},
        {"response": {"content": "listed"}},
    ],
}
BASELINE = {
    "name": "bench-ls",
    "trigger": "bench-ls",
    "steps": [
        {"response": {"tool_calls": [tool_call("ls", {"path": "."})]}},
        {"response": {"content": "bench-ls done"}},
    ],
}


async def _sdk_session() -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=[str(SERVER)])


async def call_overhead() -> tuple[float, float]:
    """Median seconds per call: the SDK's own client, agentd's McpTool path."""
    from mcp.client.stdio import stdio_client as sdk_stdio

    from agentd.mcp.pool import McpPool
    from agentd.mcp.servers import ServerDef
    from agentd.mcp.session import McpSession
    from agentd.tools import build_tools, toolset
    from agentd.tools.base import ToolContext
    from mcp import ClientSession

    raw: list[float] = []
    async with (
        sdk_stdio(await _sdk_session()) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        for _ in range(CALLS):
            started = time.perf_counter()
            await client.call_tool("add", {"a": 1, "b": 2})
            raw.append(time.perf_counter() - started)
    pool = McpPool()
    definition = ServerDef(name="t", source="bench", command=sys.executable, args=(str(SERVER),))
    context = ToolContext(cwd=Path.cwd())
    session = McpSession(pool, [definition], Path.cwd(), toolset(build_tools()), context.settings)
    tools = await session.prepare()
    tool = tools.by_name["mcp__t__add"]
    ours: list[float] = []
    try:
        for _ in range(CALLS):
            started = time.perf_counter()
            await tool.call({"a": 1, "b": 2}, context)  # type: ignore[attr-defined]
            ours.append(time.perf_counter() - started)
    finally:
        await session.close()
        await pool.close()
    return statistics.median(raw), statistics.median(ours)


async def server_start() -> float:
    """Seconds to spawn the server, initialize it and list its tools (the SDK's client)."""
    from mcp.client.stdio import stdio_client as sdk_stdio

    from mcp import ClientSession

    started = time.perf_counter()
    async with (
        sdk_stdio(await _sdk_session()) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        await client.list_tools()
        return time.perf_counter() - started  # not counting the shutdown


async def first_session(with_server: bool) -> float:
    """Seconds for session/new plus one run in a fresh ``agentd --stdio`` daemon."""
    with Home() as home:
        home.use_scenarios([*SCENARIOS, BASELINE])
        if with_server:
            write_user_config(home, server_table())
        async with stdio_client(home) as client:
            await client.call("daemon/status")
            started = time.perf_counter()
            sid = await new_session(client, home)
            _, events = await run(client, sid, "mcp-add" if with_server else "bench-ls", 60)
            elapsed = time.perf_counter() - started
        ends = [e for e in events if e["event"]["type"] == "tool_execution_end"]
        assert ends, events
        assert not ends[0]["event"].get("isError"), ends
    return elapsed


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


async def rss_growth(trigger: str) -> tuple[int, int]:
    """RSS of a socket daemon after 100 warm-up calls (``trigger``: 50 calls per run) and
    after 1,000 more in the same session."""
    with Home() as home:
        home.use_scenarios([*SCENARIOS, MANY_LS])
        write_user_config(home, server_table())
        daemon = home.start_socket_daemon()
        try:
            async with socket_client(home) as client:
                sid = await new_session(client, home)
                for _ in range(size(2, 1)):
                    await run(client, sid, trigger, 120)
                before = _rss(daemon.pid)
                for _ in range(size(20, 1)):
                    await run(client, sid, trigger, 120)
                after = _rss(daemon.pid)
        finally:
            stop(daemon)
    return before, after


async def without_servers() -> int:
    """MCP modules a daemon imported after a session without servers."""
    from agentd.protocol.methods import PromptParams, SessionNewParams
    from agentd.session.service import SessionService

    with Home() as home:
        service = SessionService(home.sessions)
        info = await service.create(SessionNewParams(cwd=str(home.project), provider="mock"))
        await service.prompt(PromptParams(session_id=info.session_id, text="hello world"))
        await service.close()
    loaded = [m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "agentd.mcp."))]
    return len([m for m in loaded if m != "agentd.mcp.servers"])


async def _measure() -> list[Row]:
    imported = await without_servers()  # first: nothing of MCP is imported yet
    starts, with_server, without = [], [], []
    for _ in range(size(5)):  # interleaved: the machine's load changes between rounds
        starts.append(await server_start())
        with_server.append(await first_session(True))
        without.append(await first_session(False))
    extras = [w - b - s for w, b, s in zip(with_server, without, starts, strict=True)]
    raw, ours = await call_overhead()
    before, after = await rss_growth("mcp-many")
    ls_before, ls_after = await rss_growth("bench-many-ls")
    start, first, base = (statistics.median(v) for v in (starts, with_server, without))
    extra = statistics.median(extras)
    return [
        ("MCP call, the SDK's own client (median of 500)", f"{raw * 1000:.2f} ms", "—"),
        ("MCP call through agentd's McpTool (median of 500)", f"{ours * 1000:.2f} ms", "—"),
        ("  agentd's overhead per call", f"{(ours - raw) * 1000:+.2f} ms", "≤ 2 ms"),
        ("stdio server's own start (spawn, initialize, list)", f"{start * 1000:.0f} ms", "—"),
        ("first session + run, with the server (median of 5)", f"{first * 1000:.0f} ms", "—"),
        ("first session + run, built-in tool only (median of 5)", f"{base * 1000:.0f} ms", "—"),
        (
            "  with − without − server start (median per round)",
            f"{extra * 1000:+.0f} ms",
            "≤ 50 ms",
        ),
        (
            "daemon RSS, 1,000 MCP calls after 100",
            f"{(after - before) / 2**20:+.1f} MiB ({after / 2**20:.0f} MiB)",
            "≤ 5 MiB",
        ),
        (
            "  same, 1,000 built-in ls calls (the session's own growth)",
            f"{(ls_after - ls_before) / 2**20:+.1f} MiB",
            "—",
        ),
        (
            "  MCP − built-in (what MCP adds)",
            f"{((after - before) - (ls_after - ls_before)) / 2**20:+.1f} MiB",
            "—",
        ),
        ("MCP modules imported, session without servers", f"{imported}", "0"),
    ]


def main() -> list[Row]:
    """Measure every MCP budget; returns (measure, value, budget) rows."""
    return asyncio.run(_measure())


if __name__ == "__main__":
    rows = main()
    width = max(len(row[0]) for row in rows)
    for measure, value, budget in rows:
        print(f"{measure.ljust(width)}  {value:>24}  {budget}")
