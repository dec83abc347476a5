"""Tool-call ids on the wire are unique within a session, though the model repeats them: the
mock answers every turn (and twice in one reply) with ``call_1``. Real daemon, mock LLM."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentd.protocol.content import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from agentd.providers.anthropic_messages import to_anthropic_messages
from agentd.providers.openai_messages import to_openai_messages
from agentd.providers.responses_messages import to_responses_input
from tests.e2e.test_tools import add_scenarios
from tests.harness import Home, new_session, run, stdio_client

pytestmark = pytest.mark.e2e


def _bash(command: str) -> dict[str, Any]:
    function = {"name": "bash", "arguments": json.dumps({"command": command})}
    return {"id": "call_1", "type": "function", "function": function}


SCENARIO = {
    "name": "repeated call ids",
    "trigger": "repeat the ids",
    "steps": [
        {"response": {"content": "Two at once.", "tool_calls": [_bash("echo a"), _bash("echo b")]}},
        {"response": {"content": "One more.", "tool_calls": [_bash("echo c")]}},
        {"response": {"content": "Done."}},
    ],
}


async def test_repeated_model_ids_are_unique_on_the_wire(home: Home) -> None:
    """Two runs whose calls the model all names call_1 (two of them in one reply): distinct
    ids in the events, each start matched by its end with the right output, and the stored
    calls keep the model's id for the provider."""
    add_scenarios(home, SCENARIO)
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        events: list[dict[str, Any]] = []
        for _ in range(2):
            result, more = await run(client, sid, "repeat the ids")
            assert result["stopReason"] == "end_turn"
            events += [e["event"] for e in more]
        messages = (await client.call("session/messages", {"sessionId": sid}))["messages"]
    starts = [e for e in events if e["type"] == "tool_execution_start"]
    ends = {e["toolCallId"]: e for e in events if e["type"] == "tool_execution_end"}
    ids = [e["toolCallId"] for e in starts]
    assert len(ids) >= 4  # three in the first run, more in the second
    assert len(set(ids)) == len(ids), ids
    assert set(ends) == set(ids)
    for start in starts:
        output = ends[start["toolCallId"]]["result"][0]["text"]
        assert output.strip() == start["args"]["command"].removeprefix("echo ")
    streamed = [
        e["delta"]["id"]
        for e in events
        if e["type"] == "message_update" and e["delta"]["type"] == "toolcall_start"
    ]
    assert streamed == ids  # the deltas carry the same session ids as the tool events
    calls = [b for m in messages if m["role"] == "assistant" for b in m["content"]]
    calls = [b for b in calls if b["type"] == "tool_call"]
    assert [c["id"] for c in calls] == ids
    assert all(c.get("providerId", c["id"]) == "call_1" for c in calls)


def test_requests_send_the_providers_own_ids() -> None:
    """A call renamed in the session goes back to the provider under its own id, with its
    result, in every wire format."""
    messages = [
        UserMessage(id="u", content=[TextContent(text="go")], timestamp=0.0),
        AssistantMessage(
            id="a",
            provider="p",
            model="m",
            content=[ToolCall(id="call_1-2", provider_id="call_1", name="bash")],
        ),
        ToolResultMessage(
            id="r",
            tool_call_id="call_1-2",
            tool_name="bash",
            content=[TextContent(text="ok")],
            timestamp=0.0,
        ),
    ]
    openai = to_openai_messages("", messages)
    assert openai[-2]["tool_calls"][0]["id"] == "call_1"
    assert openai[-1]["tool_call_id"] == "call_1"
    anthropic = to_anthropic_messages(messages)
    assert anthropic[1]["content"][0]["id"] == "call_1"
    assert anthropic[2]["content"][0]["tool_use_id"] == "call_1"
    responses = to_responses_input(messages)
    assert [i["call_id"] for i in responses if "call_id" in i] == ["call_1", "call_1"]
