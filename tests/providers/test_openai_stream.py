"""The OpenAI provider parsing recorded Chat Completions streams (one wire quirk per file)."""

from __future__ import annotations

from typing import Any

import pytest

from agentd.config.prices import Price
from agentd.protocol.content import TextContent, ThinkingContent, ToolCall
from tests.providers.replay import (
    Outcome,
    Replay,
    assert_deltas_match,
    collect,
    fixture,
    fixture_names,
    provider_for,
    sse,
)


async def replay(name: str, chunk: int | None = None, **options: Any) -> Outcome:
    transport = Replay([sse(fixture("openai", name), chunk=chunk)])
    async with transport.client() as http:
        return await collect(provider_for("openai", http, **options))


@pytest.mark.parametrize("name", fixture_names("openai"))
@pytest.mark.parametrize("chunk", [None, 1, 7, 64])
async def test_deltas_rebuild_the_final_message(name: str, chunk: int | None) -> None:
    """Whatever the chunking, the deltas describe exactly the final message's blocks."""
    outcome = await replay(name, chunk)
    assert_deltas_match(outcome.deltas, outcome.end.message)
    assert outcome.end.message.id == "msg-1"
    assert outcome.end.message.provider == "openai"


async def test_text_in_many_chunks() -> None:
    """Text pieces become TextDeltas of block 0; a missing usage chunk leaves usage at 0."""
    outcome = await replay("text_many_chunks")
    message = outcome.end.message
    assert message.content == [TextContent(text="Hello! The file `hello.py` prints a greeting.")]
    assert message.stop_reason == "stop"
    assert len(outcome.deltas) == 13
    assert message.usage.input_tokens == 0


async def test_tool_call_with_split_arguments() -> None:
    """id and name arrive first; the argument pieces are joined and decoded at the end."""
    outcome = await replay("tool_call_split_args")
    message = outcome.end.message
    assert message.stop_reason == "tool_use"
    arguments = {"path": "hello.py", "content": "print('hi')\n"}
    assert message.content == [ToolCall(id="call_Wr1te", name="write", arguments=arguments)]
    assert outcome.order[0] == "ToolCallStartDelta"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (120, 31)


async def test_parallel_tool_calls_keep_their_index() -> None:
    """Interleaved argument chunks go to the right call; text is block 0."""
    message = (await replay("parallel_tool_calls")).end.message
    assert message.content == [
        TextContent(text="Checking both."),
        ToolCall(id="call_A", name="ls", arguments={"path": "src"}),
        ToolCall(id="call_B", name="bash", arguments={"command": "pwd"}),
    ]


async def test_no_argument_calls() -> None:
    """``arguments: null`` and an empty string both mean no arguments, without an error."""
    message = (await replay("tool_call_null_args")).end.message
    assert message.content == [
        ToolCall(id="call_N", name="ls", arguments={}),
        ToolCall(id="call_E", name="find", arguments={}),
    ]


async def test_usage_only_final_chunk_with_cache() -> None:
    """Cached prompt tokens count as cache reads, not input; cost uses the model's price."""
    price = Price(input=1.0, output=2.0, cache_read=0.5)
    outcome = await replay("usage_only_final_chunk", model="test-model", price=price)
    usage = outcome.end.message.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (464, 1536, 3)
    assert usage.cost == pytest.approx((464 * 1.0 + 1536 * 0.5 + 3 * 2.0) / 1e6)


@pytest.mark.parametrize("name", ["reasoning_content", "reasoning_field"])
async def test_reasoning_fields_become_thinking(name: str) -> None:
    """reasoning_content / reasoning stream as ThinkingDeltas in their own block."""
    message = (await replay(name)).end.message
    assert isinstance(message.content[0], ThinkingContent)
    assert isinstance(message.content[1], TextContent)
    assert message.content[0].thinking in ("The user asks for 2+2.", "Need to list files.")


async def test_truncated_stream_is_an_error() -> None:
    """No finish reason: an error message keeping the partial text; not retried."""
    transport = Replay([sse(fixture("openai", "truncated"))])
    async with transport.client() as http:
        outcome = await collect(provider_for("openai", http))
    message = outcome.end.message
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert "stream ended unexpectedly" in message.error_message
    assert message.content == [TextContent(text="Let me explain")]
    assert len(transport.requests) == 1


async def test_error_event_mid_stream() -> None:
    """An error object in the stream ends it with the provider's message."""
    message = (await replay("error_event")).end.message
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert "upstream connection reset" in message.error_message


async def test_crlf_and_comments() -> None:
    """CRLF line ends, ``data:`` without a space and keep-alive comments parse normally."""
    message = (await replay("crlf_lines", chunk=3)).end.message
    assert message.content == [TextContent(text="Hi there")]
    assert message.stop_reason == "stop"


async def test_stop_with_tool_calls_counts_as_tool_use() -> None:
    """A whole tool call in one chunk with finish_reason stop is still a tool_use."""
    message = (await replay("stop_with_tool_calls")).end.message
    assert message.stop_reason == "tool_use"
    call = ToolCall(id="call_0x1", name="bash", arguments={"command": "ls -la"})
    assert message.content == [call]


@pytest.mark.parametrize(("name", "reason"), [("content_filter", "error"), ("length", "length")])
async def test_finish_reasons(name: str, reason: str) -> None:
    """content_filter ends as an error with a message; length as length."""
    message = (await replay(name)).end.message
    assert message.stop_reason == reason
    assert (message.error_message is not None) == (reason == "error")


async def test_arguments_that_are_not_an_object() -> None:
    """A JSON array as arguments gives empty arguments and a parse error for the loop."""
    message = (await replay("bad_arguments")).end.message
    call = message.content[0]
    assert isinstance(call, ToolCall)
    assert call.arguments == {}
    assert call.parse_error is not None
    assert "JSON object" in call.parse_error
