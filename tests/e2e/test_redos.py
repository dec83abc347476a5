"""Globs and grep regexes that would backtrack catastrophically, through a real daemon: a
second client is answered at once while the find or grep runs; the find ends, the grep is
killed by a cancel."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest

from tests.e2e.test_tools import add_scenarios, configure, scenario, tool_end
from tests.harness import (
    Home,
    drain,
    new_session,
    socket_client,
    start_run,
    stop,
    wait_until_async,
)

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
            for _ in range(5):  # probes spread over the tool's run: the behaviour under test
                await asyncio.wait_for(watcher.call("daemon/status"), STALL)
                await asyncio.sleep(0.05)
            result = await asyncio.wait_for(prompt, STALL)
            events = await drain(stream, until="agent_end")
            stream.close()
    finally:
        stop(process)
    assert result["stopReason"] == "end_turn"
    assert "No paths match" in tool_end(events)["result"][0]["text"]


def _search_children(daemon_pid: int) -> list[int]:
    """Pids of the daemon's children running the Python grep backend."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            ppid = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
        except OSError:
            continue
        if b"agentd.tools.search.child" in cmdline and int(ppid) == daemon_pid:
            found.append(int(pid))
    return found


async def test_catastrophic_grep_regex_on_the_python_backend(home: Home) -> None:
    """``(a+)+$`` on a long line of ``a``: a second client is answered while the Python
    backend runs it, and a cancel kills the search process."""
    configure(home, tables='[tools]\ngrep_backend = "python"\n')
    (home.project / "a.txt").write_text("a" * 60 + "b\n")
    add_scenarios(home, scenario("grep the pathological", "grep", {"pattern": "(a+)+$"}))
    process = home.start_socket_daemon()
    try:
        async with socket_client(home) as runner, socket_client(home) as watcher:
            sid = await new_session(runner, home)
            stream, prompt = await start_run(
                runner, sid, "grep the pathological", until="tool_execution_start"
            )
            for _ in range(10):  # probes spread over the search: the behaviour under test
                await asyncio.wait_for(watcher.call("daemon/status"), STALL)
                await asyncio.sleep(0.05)
            # the search process is up (it is killed only by the cancel)
            await wait_until_async(lambda: _search_children(process.pid), 5, "the search")
            await watcher.call("session/cancel", {"sessionId": sid})
            with contextlib.suppress(Exception):
                await asyncio.wait_for(prompt, STALL)
            await drain(stream, until="agent_end")
            stream.close()
            assert _search_children(process.pid) == []
    finally:
        stop(process)
