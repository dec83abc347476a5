"""Broken and hostile language servers cost one clear error and nothing else; a cancelled
call tells the server (``$/cancelRequest``); no server outlives a SIGKILLed daemon. Each
server is :mod:`tests.langserver.hostile_server` in one of its modes, driven by the mock
LLM's ``lsp`` hover call through a real daemon."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest

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
    wait_until_async,
)
from tests.langserver.conftest import ends, hostile_table, result_text
from tests.mcp.test_agentctl_mcp_e2e import agentctl

pytestmark = pytest.mark.e2e


async def _hovers(home: Home, count: int = 1) -> tuple[list[dict], dict]:  # type: ignore[type-arg]
    """``count`` hover calls in one session; their ends and the daemon's status after."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        found = []
        for _ in range(count):
            result, events = await run(client, sid, "lsp-hover", timeout=60)
            assert result["stopReason"] == "end_turn"
            found += ends(events)
        _, plain = await run(client, sid, "how are you")
        assert plain  # the session goes on
        status = await client.call("daemon/status", {})
    return found, status


async def test_a_server_crashing_mid_request_is_one_error_and_restarts(
    home: Home, tmp_path: Path
) -> None:
    home.user_config(hostile_table("crash", tmp_path))
    (first, second), status = await _hovers(home, 2)
    for end in (first, second):
        assert end.get("isError")
        assert "hostile is not available" in result_text(end)
    assert "ended in the middle of a message" in result_text(first)
    (server,) = status["languageServers"]
    assert server["state"] == "crashed"
    assert server["restarts"] == 2  # restarted for the second call, with back-off
    assert "exit status 3" in server["lastError"]


async def test_a_server_that_never_answers_initialize(home: Home, tmp_path: Path) -> None:
    home.user_config(hostile_table("hang-init", tmp_path, startup_timeout=1.0))
    (end,), status = await _hovers(home)
    assert end.get("isError")
    assert "did not answer initialize within 1 s" in result_text(end)
    assert status["languageServers"][0]["state"] == "crashed"
    await wait_until_async(lambda: not running(str(tmp_path)), 10, "the server to be stopped")


async def test_a_stderr_flood_neither_blocks_nor_floods_the_log(home: Home, tmp_path: Path) -> None:
    home.user_config(hostile_table("stderr-flood", tmp_path))
    (end,), _ = await _hovers(home)
    assert result_text(end) == "good hover"
    lines = [json.loads(line) for line in home.stderr.read_text().splitlines() if "{" in line]
    logged = [entry for entry in lines if entry.get("event") == "language server stderr"]
    assert 0 < len(logged) <= 20
    assert any(entry.get("event") == "language server stderr dropped" for entry in lines)


async def test_garbage_frames_fail_one_call_only(home: Home, tmp_path: Path) -> None:
    home.user_config(hostile_table("garbage", tmp_path))
    (first, second), status = await _hovers(home, 2)
    assert first.get("isError")
    assert "malformed" in result_text(first)
    assert result_text(second) == "good hover"
    assert status["languageServers"][0]["state"] == "ready"


async def test_a_50_mb_answer_is_refused_with_the_limit(home: Home, tmp_path: Path) -> None:
    home.user_config(hostile_table("huge", tmp_path))
    (end,), status = await _hovers(home)
    assert end.get("isError")
    assert "over the 32 MiB limit" in result_text(end)
    assert status["languageServers"][0]["state"] == "ready"  # the server stays usable


async def test_cancel_mid_request_sends_cancel_request(home: Home, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    home.user_config(hostile_table("slow", tmp_path, env={"MARKER": str(marker)}))
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        stream, prompt = await start_run(client, sid, "lsp-hover", until="tool_execution_start")
        asked = Path(f"{marker}.asked")
        await wait_until_async(asked.exists, 30, "the hover request to reach the server")
        await client.call("session/cancel", {"sessionId": sid})
        result = await asyncio.wait_for(prompt, scaled(10))
        stream.close()
    assert result["stopReason"] == "cancelled"
    await wait_until_async(marker.exists, 10, "$/cancelRequest")
    assert marker.read_text().split() == [asked.read_text()]  # that very request


async def test_no_server_outlives_a_sigkilled_daemon(home: Home, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    home.user_config(hostile_table("good", tmp_path, env={"PID_FILE": str(pid_file)}))
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            _, events = await run(client, sid, "lsp-hover")
        assert result_text(ends(events)[0]) == "good hover"
        assert running(str(tmp_path)) == [int(pid_file.read_text())]
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
        await wait_until_async(lambda: not running(str(tmp_path)), 10, "the server to die")
    finally:
        stop(daemon)
        for pid in running(str(tmp_path)):
            os.kill(pid, signal.SIGKILL)


async def test_daemon_stop_shuts_the_server_down(home: Home, tmp_path: Path) -> None:
    home.user_config(hostile_table("good", tmp_path))
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            await run(client, sid, "lsp-hover")
        assert running(str(tmp_path))
    finally:
        stop(daemon)
    await wait_until_async(lambda: not running(str(tmp_path)), 10, "the server to stop")


async def test_agentctl_lsp_list_shows_the_running_server(home: Home, tmp_path: Path) -> None:
    home.user_config(hostile_table("good", tmp_path))
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            await run(client, sid, "lsp-hover")
        shown = agentctl(home, "lsp", "list", "--socket", str(home.socket))
        listed = agentctl(home, "lsp", "list", "--socket", str(home.socket), "--json")
    finally:
        stop(daemon)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("hostile  ready  pid ")
    assert f"root {home.project}  1 open documents  0 restarts" in shown.stdout
    (server,) = json.loads(listed.stdout)["servers"]
    assert server["state"] == "ready"
    assert server["command"].endswith(f"hostile_server.py good {tmp_path}")


async def test_an_unversioned_stale_push_is_not_taken_for_the_answer(
    home: Home, tmp_path: Path
) -> None:
    home.user_config(hostile_table("stale-push", tmp_path))
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "lsp-break", timeout=60)
    (end,) = ends(events)
    assert end["details"]["diagnostics"] == [], result_text(end)
