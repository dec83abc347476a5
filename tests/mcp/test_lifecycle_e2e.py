"""MCP server lifecycle through a real daemon: failures, cancel, list changes, HTTP, trust,
sharing, and no orphan when the daemon is SIGKILLed."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agentctl.client import connect
from agentd.protocol.trust_list import add_trusted
from tests.e2e.test_orphans import running
from tests.harness import (
    Home,
    new_session,
    run,
    scaled,
    socket_client,
    start_run,
    stdio_client,
    stop,
    wait_until,
    wait_until_async,
)
from tests.mcp.conftest import SERVER, server_table, write_user_config

pytestmark = pytest.mark.e2e


def ends(events: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    return [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]


def warnings(events: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [e["event"]["message"] for e in events if e["event"]["type"] == "session_warning"]


async def test_a_server_that_never_answers_is_reported_and_the_session_works(home: Home) -> None:
    write_user_config(home, server_table("t", "--hang", startup_timeout=1.5))
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "mcp-add")
        _, again = await run(client, sid, "mcp-add")
    assert result["stopReason"] == "end_turn"
    (warning,) = warnings(events)
    assert "MCP server t" in warning
    assert "initialize within 1.5 s" in warning
    assert "Unknown tool 'mcp__t__add'" in ends(events)[0]["result"][0]["text"]
    assert warnings(again) == []  # once per session


async def test_mcp_startup_timeout_is_the_default_of_every_server(home: Home) -> None:
    """The top-level ``mcp_startup_timeout`` bounds the start of a server a client passes
    and of a table without its own ``startup_timeout``; a table's own wins."""
    hang = [str(SERVER), "--hang"]
    write_user_config(
        home,
        "mcp_startup_timeout = 1.5\n"
        + server_table("table", "--hang")
        + "\n"
        + server_table("own", "--hang", startup_timeout=2.5, env={"WHO": "own"}),  # own process
    )
    async with stdio_client(home) as client:
        given = {"name": "given", "command": sys.executable, "args": hang, "env": []}
        sid = await new_session(client, home, mcpServers=[given])
        _, events = await run(client, sid, "mcp-add")
    said = sorted(warnings(events))
    assert len(said) == 3, said
    timeouts = {
        warning.split()[2]: warning.split("initialize within ")[1].split(";")[0] for warning in said
    }
    assert timeouts == {"given": "1.5 s", "own": "2.5 s", "table": "1.5 s"}, said


async def test_a_missing_command_is_reported(home: Home) -> None:
    write_user_config(home, '[mcp_servers.t]\ncommand = "/nonexistent/mcp-server"\n')
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "mcp-add")
    assert result["stopReason"] == "end_turn"
    assert "MCP server t (/nonexistent/mcp-server) is not available" in warnings(events)[0]


async def test_a_server_that_crashes_mid_call(home: Home) -> None:
    write_user_config(home, server_table())
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "mcp-crash")
        (end,) = ends(events)
        assert end["isError"]
        assert result["stopReason"] == "end_turn"
        await asyncio.sleep(1.2)  # the first restart waits 1 s (back-off)
        _, later = await run(client, sid, "mcp-add")
    assert ends(later)[0]["result"][0]["text"] == "5"  # restarted


async def test_stderr_flood_is_rate_limited_in_the_log(home: Home) -> None:
    write_user_config(home, server_table("t", "--flood"))
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "mcp-add")
    assert ends(events)[0]["result"][0]["text"] == "5"
    log = home.stderr.read_text()
    lines = [json.loads(line) for line in log.splitlines() if "mcp server stderr" in line]
    logged = [entry for entry in lines if entry.get("event") == "mcp server stderr"]
    assert 0 < len(logged) <= 20
    assert any(entry.get("event") == "mcp server stderr dropped" for entry in lines)


async def test_cancel_ends_the_call_and_tells_the_server(home: Home, tmp_path: Path) -> None:
    marker = tmp_path / "slow"
    write_user_config(home, server_table())
    from tests.mcp.conftest import mcp_call

    home.use_scenarios(
        [mcp_call("mcp-slow", "mcp__t__slow", {"seconds": 60, "marker": str(marker)})]
    )
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        stream, prompt = await start_run(client, sid, "mcp-slow", until="tool_execution_start")
        await wait_until_async(marker.exists, 30, "the call to start")
        await client.call("session/cancel", {"sessionId": sid})
        result = await asyncio.wait_for(prompt, scaled(10))
        stream.close()
        assert result["stopReason"] == "cancelled"
        await wait_until_async(
            lambda: Path(f"{marker}.cancelled").exists(), 10, "notifications/cancelled"
        )


async def test_list_changed_refreshes_the_tools_between_turns(home: Home) -> None:
    write_user_config(home, server_table())
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "mcp-grow")
    grow, extra = ends(events)
    assert grow["result"][0]["text"] == "grown"
    assert not extra.get("isError"), extra
    assert extra["result"][0]["text"] == "extra ran"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_streamable_http_server(home: Home) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stderr=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _connectable(port), 30, "the HTTP server to listen")
        url = f"http://127.0.0.1:{port}/mcp"
        write_user_config(home, f'[mcp_servers.web]\nurl = "{url}"\n')
        async with stdio_client(home) as client:
            sid = await new_session(client, home)
            _, events = await run(client, sid, "mcp-http-add")
            _, counted = await run(client, sid, "mcp-http-count")
    finally:
        server.kill()
        server.wait()
    assert ends(events)[0]["result"][0]["text"] == "42"
    assert ends(counted)[0]["result"][0]["text"] == "counted"
    assert progress(counted) == [f"[progress {i}/3] step {i}\n" for i in (1, 2, 3)]


def progress(events: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [e["event"]["output"] for e in events if e["event"]["type"] == "tool_execution_update"]


def _connectable(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _mcp_json(folder: Path) -> None:
    entry = {"command": sys.executable, "args": [str(SERVER)]}
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"t": entry}}))


async def test_an_untrusted_mcp_json_starts_nothing(home: Home) -> None:
    untrusted = home.root / "untrusted"
    (untrusted / ".git").mkdir(parents=True)
    _mcp_json(untrusted)
    async with stdio_client(home) as client:
        info = await client.call("session/new", {"cwd": str(untrusted), "provider": "mock"})
        _, events = await run(client, info["sessionId"], "mcp-add")
    (warning,) = [w for w in info["warnings"] if ".mcp.json" in w]
    assert f"agentctl trust {untrusted}" in warning
    assert "Unknown tool" in ends(events)[0]["result"][0]["text"]
    add_trusted(untrusted, home.env)
    async with stdio_client(home) as client:
        info = await client.call("session/new", {"cwd": str(untrusted), "provider": "mock"})
        _, trusted = await run(client, info["sessionId"], "mcp-add")
    assert not [w for w in info["warnings"] if ".mcp.json" in w]
    assert ends(trusted)[0]["result"][0]["text"] == "5"


async def test_one_process_shared_by_sessions_and_none_left_after_sigkill(
    home: Home, tmp_path: Path
) -> None:
    marker = tmp_path / "starts"
    write_user_config(home, server_table("t", "--marker", str(marker)))
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            first = await new_session(client, home)
            second = await new_session(client, home)
            await run(client, first, "mcp-add")
            await run(client, second, "mcp-add")
        pids = [int(line) for line in marker.read_text().split()]
        assert len(pids) == 1  # one process for both sessions
        assert running(str(marker)) == pids  # the marker names this test's server only
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
        await wait_until_async(lambda: not running(str(marker)), 10, "the server to die")
    finally:
        stop(daemon)
        for pid in running(str(marker)):
            os.kill(pid, signal.SIGKILL)


async def test_daemon_exit_stops_the_servers(home: Home, tmp_path: Path) -> None:
    marker = tmp_path / "starts"  # in the server's argv: other tests' servers never match it
    write_user_config(home, server_table("t", "--marker", str(marker)))
    daemon = home.start_socket_daemon()
    try:
        client = await connect(home.socket, autostart=False)
        sid = await new_session(client, home)
        await run(client, sid, "mcp-add")
        await client.close()
        assert running(str(marker))
    finally:
        stop(daemon)
    await wait_until_async(lambda: not running(str(marker)), 10, "the server to stop")
