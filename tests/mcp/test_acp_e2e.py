"""``agentd acp`` with the official ACP SDK as the editor: the ``mcpServers`` it passes
(stdio and http) give the session their tools, seen as ``tool_call`` updates."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio

import acp
from tests.acp.conftest import SCENARIOS, Box, Editor, spawn
from tests.harness import wait_until
from tests.mcp.conftest import SCENARIOS as MCP_SCENARIOS
from tests.mcp.conftest import SERVER
from tests.mcp.test_lifecycle_e2e import _connectable, free_port

pytestmark = pytest.mark.e2e


def mcp_box() -> Box:
    box = Box()
    scenarios = json.loads(SCENARIOS.read_text())
    scenarios["scenarios"] = [*MCP_SCENARIOS, *scenarios["scenarios"]]
    path = box.root / "scenarios.json"
    path.write_text(json.dumps(scenarios))
    box.env["AGENTD_MOCK_SCENARIOS"] = str(path)
    return box


async def test_initialize_advertises_http_mcp_servers() -> None:
    with mcp_box() as box:
        argv = box.argv()
        editor = Editor()
        async with acp.spawn_agent_process(editor, argv[0], *argv[1:], env=box.env) as (conn, _):
            reply = await conn.initialize(protocol_version=1)
    assert reply.agent_capabilities.mcp_capabilities.http is True
    assert reply.agent_capabilities.mcp_capabilities.sse is False


async def test_stdio_and_http_servers_from_session_new() -> None:
    port = free_port()
    http = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _connectable(port), 30, "the HTTP server to listen")
        with mcp_box() as box:
            editor = Editor()
            stdio = McpServerStdio(
                name="t",
                command=sys.executable,
                args=[str(SERVER)],
                env=[EnvVariable(name="GREETING", value="from the editor")],
            )
            web = HttpMcpServer(
                type="http",
                name="web",
                url=f"http://127.0.0.1:{port}/mcp",
                headers=[HttpHeader(name="X-Test", value="1")],
            )
            async with spawn(box, editor) as (conn, _):
                session = await conn.new_session(cwd=str(box.project), mcp_servers=[stdio, web])
                sid = session.session_id
                first = await conn.prompt(session_id=sid, prompt=[acp.text_block("mcp-add")])
                second = await conn.prompt(session_id=sid, prompt=[acp.text_block("mcp-http-add")])
                third = await conn.prompt(session_id=sid, prompt=[acp.text_block("mcp-named-env")])
    finally:
        http.kill()
        http.wait()
    assert (first.stop_reason, second.stop_reason, third.stop_reason) == ("end_turn",) * 3
    calls = editor.of("tool_call")
    assert [c.title for c in calls][:2] == ["mcp__t__add", "mcp__web__add"]
    assert calls[0].raw_input == {"a": 2, "b": 3}
    done = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    texts = [u.content[0].content.text for u in done]
    updates = [(u.status, u.content) for u in editor.of("tool_call_update")]
    assert texts == ["5", "42", "from the editor"], updates


async def test_session_load_with_mcp_servers_attaches_them() -> None:
    with mcp_box() as box:
        stdio = McpServerStdio(name="t", command=sys.executable, args=[str(SERVER)], env=[])
        async with spawn(box, Editor()) as (conn, _):
            session = await conn.new_session(cwd=str(box.project), mcp_servers=[])
            sid = session.session_id
            await conn.prompt(session_id=sid, prompt=[acp.text_block("mcp-add")])
        editor = Editor()
        async with spawn(box, editor) as (conn, _):  # a new agent process loads the session
            await conn.load_session(cwd=str(box.project), session_id=sid, mcp_servers=[stdio])
            replayed = len(editor.of("tool_call")), len(editor.of("tool_call_update"))
            done = await conn.prompt(session_id=sid, prompt=[acp.text_block("mcp-add")])
    assert done.stop_reason == "end_turn"
    calls = editor.of("tool_call")[replayed[0] :]
    assert [(c.title, c.raw_input) for c in calls] == [("mcp__t__add", {"a": 2, "b": 3})]
    updates = editor.of("tool_call_update")[replayed[1] :]
    completed = [u for u in updates if u.status == "completed"]
    assert [u.content[0].content.text for u in completed] == ["5"]


async def test_an_sse_server_is_refused() -> None:
    from acp.schema import SseMcpServer

    with mcp_box() as box:
        editor = Editor()
        async with spawn(box, editor) as (conn, _):
            server = SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[])
            with pytest.raises(acp.RequestError) as caught:
                await conn.new_session(cwd=str(box.project), mcp_servers=[server])
    assert "SSE servers are not supported" in str(caught.value.data or caught.value)
