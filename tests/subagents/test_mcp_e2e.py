"""Subagents in sessions with MCP servers, through the real daemon, the real test server
(:mod:`tests.mcp.server`, over stdio and streamable HTTP) and the mock LLM: a child inherits
its parent's MCP tools, within its profile's tools."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness import Home, new_session, stdio_client, wait_until
from tests.mcp.conftest import SERVER, server_table
from tests.mcp.test_lifecycle_e2e import _connectable, free_port
from tests.subagents.test_task_e2e import child_ids, of_session, prompt_and_collect

pytestmark = pytest.mark.e2e


def child_results(events: list[dict[str, Any]], child: str) -> dict[str, dict[str, Any]]:
    """The child's tool results by call id."""
    return {
        e["toolCallId"]: e for e in of_session(events, child) if e["type"] == "tool_execution_end"
    }


def task_end(events: list[dict[str, Any]], sid: str) -> dict[str, Any]:
    return next(e for e in of_session(events, sid) if e["type"] == "tool_execution_end")


async def delegate(home: Home, **session: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    async with stdio_client(home) as client:
        sid = await new_session(client, home, **session)
        _, events = await prompt_and_collect(client, sid, "delegate an mcp call")
    return task_end(events, sid), events


def assert_the_child_called_add(end: dict[str, Any], events: list[dict[str, Any]]) -> None:
    (child,) = child_ids(events)
    results = child_results(events, child)
    assert results["c_add"]["result"][0]["text"] == "5", results["c_add"]
    assert not results["c_add"].get("isError")
    assert not end.get("isError"), end
    assert end["result"][0]["text"] == "Child mcp done."


async def test_the_general_profile_inherits_a_configured_stdio_server(home: Home) -> None:
    home.user_config(server_table("t"))
    end, events = await delegate(home)
    assert_the_child_called_add(end, events)


async def test_a_child_inherits_a_server_given_with_session_new(home: Home) -> None:
    """A server only the parent's session/new named: the child uses the parent's."""
    given = {"name": "t", "command": sys.executable, "args": [str(SERVER)]}
    end, events = await delegate(home, mcpServers=[given])
    assert_the_child_called_add(end, events)


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stderr=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _connectable(port), 30, "the HTTP server to listen")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.kill()
        server.wait()


async def test_a_child_inherits_a_streamable_http_server(home: Home, http_server: str) -> None:
    home.user_config(f'[mcp_servers.t]\nurl = "{http_server}"\n')
    end, events = await delegate(home)
    assert_the_child_called_add(end, events)


async def test_a_profile_narrows_the_mcp_tools_by_name(home: Home) -> None:
    """``tools: read, mcp__t__add``: add works, the server's other tools are not the child's."""
    home.user_config(server_table("t"))
    agents = home.config_dir / "agentd" / "agents"
    agents.mkdir(parents=True)
    (agents / "general.md").write_text(
        "---\nname: general\ndescription: Adds.\ntools: read, mcp__t__add\n---\nAdd.\n"
    )
    end, events = await delegate(home)
    (child,) = child_ids(events)
    results = child_results(events, child)
    assert results["c_add"]["result"][0]["text"] == "5"
    assert "Unknown tool 'mcp__t__fail'" in results["c_fail"]["result"][0]["text"]
    assert not end.get("isError"), end


async def test_a_profile_without_mcp_tools_gets_none(home: Home) -> None:
    home.user_config(server_table("t"))
    agents = home.config_dir / "agentd" / "agents"
    agents.mkdir(parents=True)
    (agents / "general.md").write_text(
        "---\nname: general\ndescription: Reads.\ntools: read, mcp__other__*\n---\nRead.\n"
    )
    _, events = await delegate(home)
    (child,) = child_ids(events)
    results = child_results(events, child)
    assert "Unknown tool 'mcp__t__add'" in results["c_add"]["result"][0]["text"]
