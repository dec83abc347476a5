"""A real daemon on the OpenAI Responses wire format (``api = "openai-responses"``), against
the mock LLM speaking it over real HTTP: tool turns, reasoning round trip, cancel."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from agentd.mockllm import MockLLMServer
from tests.harness import Home, new_session, run, scaled, start_run, stdio_client, wait_until_async

pytestmark = pytest.mark.e2e

PROVIDER = """
[providers.resp]
api = "openai-responses"
base_url = "{url}"
models = ["mock-model"]
"""


@pytest.fixture
async def llm(home: Home) -> AsyncIterator[MockLLMServer]:
    """A mock LLM the user's own config points a Responses provider at."""
    async with MockLLMServer() as server:
        home.user_config(PROVIDER.format(url=server.url))
        yield server


async def test_tool_turns_over_the_responses_api(home: Home, llm: MockLLMServer) -> None:
    """hello world: the write and bash calls run, their outputs go back as input items."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="resp")
        result, events = await run(client, sid, "hello world")
    assert result["stopReason"] == "end_turn"
    assert (home.project / "hello.py").exists()
    ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    assert ends
    assert not any(e.get("isError") for e in ends)
    last = llm.requests[-1]
    assert last["store"] is False
    outputs = [i for i in last["input"] if i.get("type") == "function_call_output"]
    calls = [i for i in last["input"] if i.get("type") == "function_call"]
    assert len(outputs) == len(calls) == len(ends)
    assert [o["call_id"] for o in outputs] == [c["call_id"] for c in calls]


async def test_reasoning_streams_as_thinking(home: Home, llm: MockLLMServer) -> None:
    """A reasoning summary arrives as thinking deltas, then the answer as text."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="resp")
        result, events = await run(client, sid, "think first")
        messages = await client.call("session/messages", {"sessionId": sid})
    assert result["stopReason"] == "end_turn"
    updates = [e["event"] for e in events if e["event"]["type"] == "message_update"]
    kinds = {update["delta"]["type"] for update in updates}
    assert {"thinking_delta", "text_delta"} <= kinds
    reply = messages["messages"][-1]
    assert [block["type"] for block in reply["content"]] == ["thinking", "text"]


async def test_cancel_closes_the_http_stream(home: Home, llm: MockLLMServer) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="resp")
        _, prompt = await start_run(client, sid, "be slow", until="message_update")
        assert llm.active_streams == 1
        await client.call("session/cancel", {"sessionId": sid})
        assert (await asyncio.wait_for(prompt, scaled(5)))["stopReason"] == "cancelled"
        await wait_until_async(lambda: llm.active_streams == 0, 5, "the stream to close")
