"""Globs that would backtrack catastrophically, through a real daemon: a second client is
answered at once while the find runs, and the find ends."""

from __future__ import annotations

import asyncio

import pytest

from tests.e2e.daemon import Home, drain, new_session, socket_client, start_run, stop
from tests.e2e.test_tools import add_scenarios, scenario, tool_end

pytestmark = pytest.mark.e2e

FIND_PATTERN = "*a" * 14 + "b"
IGNORE_LINE = "*a" * 11 + "b"
STALL = 5.0  # a frozen event loop stays frozen for minutes with these patterns


async def test_redos_globs_neither_freeze_the_daemon_nor_hang_the_find(home: Home) -> None:
    (home.project / ".gitignore").write_text(IGNORE_LINE + "\n")
    for n in range(20):
        (home.project / ("a" * 40 + f"{n:02}")).write_text("x")
    add_scenarios(home, scenario("find the pathological", "find", {"pattern": FIND_PATTERN}))
    process = home.start_socket_daemon()
    try:
        async with socket_client(home) as runner, socket_client(home) as watcher:
            sid = await new_session(runner, home)
            stream, prompt = await start_run(
                runner, sid, "find the pathological", until="tool_execution_start"
            )
            for _ in range(5):
                await asyncio.wait_for(watcher.call("daemon/status"), STALL)
                await asyncio.sleep(0.05)
            result = await asyncio.wait_for(prompt, STALL)
            events = await drain(stream, until="agent_end")
            stream.close()
    finally:
        stop(process)
    assert result["stopReason"] == "end_turn"
    assert "No paths match" in tool_end(events)["result"][0]["text"]
