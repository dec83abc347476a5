"""MCP servers' tools through a real daemon and the mock LLM: listed, called, results."""

from __future__ import annotations

import pytest

from tests.harness import Home, new_session, run, stdio_client
from tests.mcp.conftest import server_table, write_user_config

pytestmark = pytest.mark.e2e


def ends(events: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    return [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]


async def test_a_tool_is_listed_and_called(home: Home) -> None:
    write_user_config(home, server_table())
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "mcp-add please")
        (end,) = ends(events)
        assert end["name"] == "mcp__t__add"
        assert not end.get("isError")
        assert end["result"][0]["text"] == "5"
        assert end["details"]["structuredContent"] == {"result": 5}
        assert end["details"]["server"] == "t"
        assert result["stopReason"] == "end_turn"
        messages = await client.call("session/messages", {"sessionId": sid})
    tool_result = [m for m in messages["messages"] if m["role"] == "tool_result"]
    assert tool_result[0]["content"][0]["text"] == "5"


async def test_errors_images_and_resources(home: Home) -> None:
    write_user_config(home, server_table())
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, failed = await run(client, sid, "mcp-fail")
        _, picture = await run(client, sid, "mcp-picture")
        _, resources = await run(client, sid, "mcp-resources")
    (fail,) = ends(failed)
    assert fail["isError"]
    assert "fail" in fail["result"][0]["text"]
    (image,) = ends(picture)
    assert image["result"][0]["type"] == "image"
    assert image["result"][0]["mimeType"] == "image/png"
    (res,) = ends(resources)
    text = res["result"][0]["text"]
    assert "embedded notes" in text
    assert "file:///big.log" in text


async def test_progress_streams_as_the_calls_output(home: Home) -> None:
    write_user_config(home, server_table())
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "mcp-count")
    updates = [e["event"] for e in events if e["event"]["type"] == "tool_execution_update"]
    (end,) = ends(events)
    assert [u["output"] for u in updates] == [f"[progress {i}/3] step {i}\n" for i in (1, 2, 3)]
    assert {u["toolCallId"] for u in updates} == {end["toolCallId"]}
    assert end["result"][0]["text"] == "counted"


async def test_long_output_is_truncated_with_a_notice(home: Home) -> None:
    write_user_config(home, server_table())
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "mcp-long")
    (end,) = ends(events)
    text = end["result"][0]["text"]
    assert text.startswith("line 0\n")
    assert "Output truncated" in text
    assert end["details"]["truncated"] is True


async def test_provider_keys_stay_out_unless_named(home: Home) -> None:
    home.env["MCP_SECRET_API_KEY"] = "sk-do-not-leak-1234"
    write_user_config(home, server_table(env={"GREETING": "hello"}))
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, secret = await run(client, sid, "mcp-env")
        _, named = await run(client, sid, "mcp-named-env")
    assert ends(secret)[0]["result"][0]["text"] == "<unset>"
    assert ends(named)[0]["result"][0]["text"] == "hello"


async def test_session_new_mcp_servers_are_for_that_session_only(home: Home) -> None:
    import sys

    from tests.mcp.conftest import SERVER

    server = {"name": "t", "command": sys.executable, "args": [str(SERVER)], "env": []}
    async with stdio_client(home) as client:
        with_server = await new_session(client, home, mcpServers=[server])
        without = await new_session(client, home)
        _, events = await run(client, with_server, "mcp-add")
        _, missing = await run(client, without, "mcp-add")
    assert ends(events)[0]["result"][0]["text"] == "5"
    assert "Unknown tool 'mcp__t__add'" in ends(missing)[0]["result"][0]["text"]


async def test_a_bad_mcp_servers_entry_is_invalid_params(home: Home) -> None:
    from agentd.errors import RpcError

    async with stdio_client(home) as client:
        with pytest.raises(RpcError) as caught:
            await new_session(client, home, mcpServers=[{"name": "x", "args": []}])
    assert "needs a command" in str(caught.value)
    assert "mcpServers[0]" in str(caught.value)


async def test_session_load_with_mcp_servers_attaches_them(home: Home) -> None:
    import sys

    from tests.mcp.conftest import SERVER

    server = {"name": "t", "command": sys.executable, "args": [str(SERVER)], "env": []}
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, before = await run(client, sid, "mcp-add")
    assert "Unknown tool 'mcp__t__add'" in ends(before)[0]["result"][0]["text"]
    async with stdio_client(home) as client:  # a new daemon: the session comes from its file
        loaded = await client.call("session/load", {"sessionId": sid, "mcpServers": [server]})
        _, after = await run(client, sid, "mcp-add")
    assert loaded["messageCount"] > 0
    (end,) = ends(after)
    assert end["name"] == "mcp__t__add"
    assert end["result"][0]["text"] == "5"
