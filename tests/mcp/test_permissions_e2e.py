"""Permission rules and modes for MCP tools, through a real daemon."""

from __future__ import annotations

import pytest

from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import RequestPermissionParams
from tests.harness import Home, new_session, run, stdio_client
from tests.mcp.conftest import server_table, write_user_config

pytestmark = pytest.mark.e2e


def end_of(events: list[dict]) -> dict:  # type: ignore[type-arg]
    return next(e["event"] for e in events if e["event"]["type"] == "tool_execution_end")


async def test_deny_and_allow_rules_name_mcp_tools(home: Home) -> None:
    rules = '[permissions]\nallow = ["mcp__t__*"]\ndeny = ["mcp__t__add"]\n'
    write_user_config(home, server_table() + rules)
    async with stdio_client(home) as client:
        sid = await new_session(client, home, permissionMode="ask")
        _, denied = await run(client, sid, "mcp-add")
        _, allowed = await run(client, sid, "mcp-fail")
    assert "denied by the rule `mcp__t__add`" in end_of(denied)["result"][0]["text"]
    assert "Error executing tool fail" in end_of(allowed)["result"][0]["text"]  # it ran


async def test_ask_mode_asks_with_server_tool_and_arguments(home: Home) -> None:
    asked: list[RequestPermissionParams] = []

    async def handler(params: RequestPermissionParams) -> PermissionOption:
        asked.append(params)
        return "allow_once"

    write_user_config(home, server_table(trust_annotations=True))
    async with stdio_client(home, handler) as client:
        sid = await new_session(client, home, permissionMode="ask")
        _, events = await run(client, sid, "mcp-add")
        _, lookup = await run(client, sid, "mcp-lookup")
    assert [p.tool for p in asked] == ["mcp__t__add"]  # lookup is readOnlyHint, trusted
    assert asked[0].args == {"a": 2, "b": 3}
    preview = asked[0].preview  # what the approval shows: server, tool, arguments
    assert preview is not None
    assert (preview.kind, preview.server, preview.tool) == ("mcp", "t", "add")
    assert preview.arguments == {"a": 2, "b": 3}
    assert asked[0].always_rule == "mcp__t__add"
    assert end_of(events)["result"][0]["text"] == "5"
    assert end_of(lookup)["result"][0]["text"] == "value of k"


async def test_read_only_refuses_all_but_read_only_hinted_tools(home: Home) -> None:
    write_user_config(home, server_table(trust_annotations=True))
    async with stdio_client(home) as client:
        sid = await new_session(client, home, permissionMode="read-only")
        _, refused = await run(client, sid, "mcp-add")
        _, lookup = await run(client, sid, "mcp-lookup")
    assert "read-only" in end_of(refused)["result"][0]["text"]
    assert end_of(lookup)["result"][0]["text"] == "value of k"


async def test_a_bad_mcp_rule_is_a_config_error(home: Home) -> None:
    from agentd.errors import RpcError

    write_user_config(home, server_table() + '[permissions]\nallow = ["mcp__t__(x)"]\n')
    async with stdio_client(home) as client:
        with pytest.raises(RpcError) as caught:
            await new_session(client, home)
    assert "MCP rule" in str(caught.value)
