"""Log hygiene of a real socket daemon: clients leaving and shutdown are info lines, never
error tracebacks; a dropped connection's warning names that connection."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest

from agentctl.client import connect
from tests.e2e.test_transport_socket import FLOOD, _log_event, _watch_until_agent_end
from tests.harness import Home, IsolatedHome, new_session, scaled, socket_client, start_run, stop

pytestmark = pytest.mark.e2e


def records(home: Home) -> list[dict[str, Any]]:
    text = (home.root / "sta" / "agentd" / "agentd.log").read_text()
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


async def test_disconnects_and_shutdown_log_no_errors(home: Home) -> None:
    process = home.start_socket_daemon()
    try:
        leaving = await connect(home.socket, autostart=False)
        sid = await new_session(leaving, home)
        stream, prompt = await start_run(
            leaving, sid, "sleep in bash", until="tool_execution_start"
        )
        stream.close()
        await leaving.close()
        await asyncio.gather(prompt, return_exceptions=True)
        async with socket_client(home) as staying:
            await staying.call("daemon/status")
            stop(process)
    finally:
        stop(process)
    logged = records(home)
    assert not [r for r in logged if r["level"] in ("error", "critical")]
    assert sum(r["event"] == "client disconnected" for r in logged) >= 2
    assert not [r for r in logged if "Traceback" in json.dumps(r)]


def _read_answer(sock: socket.socket, request_id: int, timeout: float = 10) -> dict[str, Any]:
    """Read ``sock`` line by line until the answer to ``request_id``."""
    sock.settimeout(scaled(timeout))
    with sock.makefile("rb") as lines:
        for line in lines:
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id:
                return message
    raise EOFError(f"closed before the answer to {request_id}")


async def test_the_dropping_warning_names_the_dropped_connection(sandbox: IsolatedHome) -> None:
    """A subscriber that stops reading is dropped while another connection prompts: the
    warning carries the subscriber's connection id, not the prompter's."""
    scenarios = sandbox.root / "flood.json"
    scenarios.write_text(json.dumps(FLOOD))
    sandbox.env["AGENTD_MOCK_SCENARIOS"] = str(scenarios)
    work = sandbox.root / "work"
    work.mkdir()
    process = sandbox.start_socket_daemon("--stall-timeout", "0.5")
    try:
        prompter = await connect(sandbox.socket, autostart=False)
        await prompter.call(
            "session/new", {"cwd": str(work), "provider": "mock", "sessionId": "s1"}
        )
        with socket.socket(socket.AF_UNIX) as stalled:
            stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            stalled.connect(str(sandbox.socket))
            for request in (
                {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "session/subscribe",
                    "params": {"sessionId": "s1"},
                },
            ):
                stalled.sendall(json.dumps(request).encode() + b"\n")
            await asyncio.to_thread(_read_answer, stalled, 2)  # subscribed; reads no more
            prompt = asyncio.create_task(
                prompter.call("session/prompt", {"sessionId": "s1", "text": "flood"})
            )
            await _watch_until_agent_end(sandbox, "s1")
            dropped = await _log_event(sandbox, "dropping connection")
            await prompt
        await prompter.close()
    finally:
        stop(process)
    connected = [e["conn_id"] for e in sandbox.log_events() if e["event"] == "client connected"]
    prompter_id, stalled_id = connected[1], connected[2]  # the first one probed the socket
    assert dropped["conn_id"] == stalled_id != prompter_id
    assert dropped.get("request_id") is None
