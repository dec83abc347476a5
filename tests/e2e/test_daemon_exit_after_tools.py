"""A daemon ends promptly on SIGTERM and on ``shutdown`` after any tool has run: nothing a
tool leaves behind (web_fetch's converter thread, a search child, a spill writer, a
subagent) keeps the process alive. Each case runs one tool through the real daemon, then
stops it and waits at most about a second for the process to be gone."""

from __future__ import annotations

import signal
from typing import Any

import pytest

from tests.harness import Home, new_session, run, socket_client, wait_pid_exit
from tests.scenarios import tool_call
from tests.tools.webserver import web_server

pytestmark = pytest.mark.e2e

CALLS: dict[str, dict[str, Any]] = {
    "read": {"path": "notes.txt"},
    "write": {"path": "new.txt", "content": "new\n"},
    "edit": {"path": "notes.txt", "old_string": "hello", "new_string": "bye"},
    "bash": {"command": "echo hi; sleep 0.1"},
    "grep": {"pattern": "hello"},
    "find": {"pattern": "*.txt"},
    "ls": {"path": "."},
    "todo": {"todos": [{"content": "a step", "status": "pending"}]},
    "web_fetch": {"url": "http://127.0.0.1:{port}/page"},
    "task": {"description": "greet", "prompt": "hello there"},
}


async def run_and_stop(home: Home, tool: str, args: dict[str, Any], how: str) -> bool:
    (home.project / "notes.txt").write_text("hello\n")
    steps = [
        {"response": {"tool_calls": [tool_call(tool, args)]}},
        {"response": {"content": "Done."}},
    ]
    home.use_scenarios([{"name": "one-tool", "trigger": "use the tool", "steps": steps}])
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            _, events = await run(client, sid, "use the tool")
            ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
            assert len(ends) == 1
            assert not ends[0].get("isError"), ends
            if how == "shutdown":
                await client.call("shutdown", {})
        if how == "signal":
            daemon.send_signal(signal.SIGTERM)
        return wait_pid_exit(daemon.pid, timeout=1.0)
    finally:
        daemon.kill()
        daemon.wait()


@pytest.mark.parametrize("tool", sorted(CALLS))
async def test_sigterm_ends_the_daemon_after_each_tool(home: Home, tool: str) -> None:
    with web_server() as server:
        home.user_config('[tools.web_fetch]\nallow_hosts = ["127.0.0.1"]\n')
        port = server.server_address[1]
        args = {k: v.format(port=port) if isinstance(v, str) else v for k, v in CALLS[tool].items()}
        assert await run_and_stop(home, tool, args, "signal"), f"still running after {tool}"


async def test_shutdown_ends_the_daemon_after_a_fetch(home: Home) -> None:
    with web_server() as server:
        home.user_config('[tools.web_fetch]\nallow_hosts = ["127.0.0.1"]\n')
        args = {"url": f"http://127.0.0.1:{server.server_address[1]}/page"}
        assert await run_and_stop(home, "web_fetch", args, "shutdown"), "still running"
