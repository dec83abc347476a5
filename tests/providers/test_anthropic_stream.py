"""The Anthropic provider parsing recorded Messages streams (one wire quirk per file)."""

from __future__ import annotations

from typing import Any

import pytest

from agentd.protocol.content import TextContent, ThinkingContent, ToolCall
from agentd.providers.anthropic_messages import to_anthropic_messages
from tests.providers.replay import (
    Outcome,
    Replay,
    assert_deltas_match,
    collect,
    fixture,
    fixture_names,
    provider_for,
    request,
    sse,
    user,
)


async def replay(name: str, chunk: int | None = None, **options: Any) -> Outcome:
    transport = Replay([sse(fixture("anthropic", name), chunk=chunk)])
    model = options.get("model", "test-model")
    async with transport.client() as http:
        return await collect(provider_for("anthropic", http, **options), request(model=model))


@pytest.mark.parametrize("name", fixture_names("anthropic"))
@pytest.mark.parametrize("chunk", [None, 1, 5, 100])
async def test_deltas_rebuild_the_final_message(name: str, chunk: int | None) -> None:
    """Whatever the chunking, the deltas describe exactly the final message's blocks."""
    outcome = await replay(name, chunk)
    assert_deltas_match(outcome.deltas, outcome.end.message)
    assert outcome.end.message.provider == "anthropic"


async def test_text_reply_with_cache_usage() -> None:
    """Usage comes from message_start (input, cache) and message_delta (output); the cost
    uses the built-in price of the model (a dated name finds its base entry)."""
    model = "claude-sonnet-4-5-20250929"
    outcome = await replay("text_reply", model=model)
    message = outcome.end.message
    assert message.content == [TextContent(text="Hello! How can I help?")]
    assert message.stop_reason == "stop"
    usage = message.usage
    assert (usage.input_tokens, usage.output_tokens) == (12, 15)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (2048, 512)
    expected = (12 * 3.0 + 15 * 15.0 + 2048 * 0.3 + 512 * 3.75) / 1e6
    assert usage.cost == pytest.approx(expected)


async def test_tool_use_with_json_pieces() -> None:
    """input_json_delta pieces (the first one empty) are joined and decoded."""
    message = (await replay("tool_use")).end.message
    assert message.stop_reason == "tool_use"
    assert message.content == [
        TextContent(text="I'll read it."),
        ToolCall(id="toolu_01A09q90qw90lq917835lq9", name="read", arguments={"path": "README.md"}),
    ]


async def test_thinking_keeps_its_signature() -> None:
    """thinking_delta text and the signature_delta end up in one ThinkingContent."""
    message = (await replay("thinking_signature")).end.message
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "Let me work this out."
    assert thinking.signature is not None
    assert thinking.signature.startswith("EqQB")
    assert message.content[1] == TextContent(text="The answer is 4.")


async def test_error_event_after_text_is_not_retried() -> None:
    """An overloaded_error once text streamed ends the stream with the partial text."""
    transport = Replay([sse(fixture("anthropic", "error_mid_stream"))])
    async with transport.client() as http:
        outcome = await collect(provider_for("anthropic", http))
    message = outcome.end.message
    assert message.stop_reason == "error"
    assert message.error_message == "overloaded_error: Overloaded"
    assert message.content == [TextContent(text="Working on")]
    assert len(transport.requests) == 1
    assert outcome.retries == []


async def test_overloaded_before_any_delta_is_retried() -> None:
    """An overloaded_error before any content is retried, and the retry succeeds."""
    overloaded = sse(fixture("anthropic", "overloaded_before_delta"))
    transport = Replay([overloaded, sse(fixture("anthropic", "text_reply"))])
    async with transport.client() as http:
        outcome = await collect(provider_for("anthropic", http))
    assert [r.attempt for r in outcome.retries] == [1]
    assert outcome.order[0] == "Retry"
    assert outcome.end.message.stop_reason == "stop"
    assert len(transport.requests) == 2


async def test_truncated_stream() -> None:
    """No message_stop: an error saying the stream ended unexpectedly."""
    message = (await replay("truncated")).end.message
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert "stream ended unexpectedly" in message.error_message
    assert message.content == [TextContent(text="Half a sentence")]


async def test_tool_use_without_input() -> None:
    """A tool_use with no input deltas has empty arguments and no parse error."""
    message = (await replay("tool_use_no_input")).end.message
    assert message.content == [ToolCall(id="toolu_02", name="ls", arguments={})]


@pytest.mark.parametrize(("name", "reason"), [("max_tokens", "length"), ("refusal", "error")])
async def test_stop_reasons(name: str, reason: str) -> None:
    """max_tokens maps to length; refusal to an error with a message."""
    message = (await replay(name)).end.message
    assert message.stop_reason == reason
    assert (message.error_message is not None) == (reason == "error")


async def test_redacted_thinking_is_kept_and_sent_back_unchanged() -> None:
    """A redacted_thinking block is kept whole (no deltas) and goes back as it came; a server
    tool call whose result never came is not kept (its start ends as failed) and does not
    shift the text's index."""
    outcome = await replay("redacted_and_server_blocks")
    redacted = ThinkingContent(thinking="", signature="EmwKAhgBEgy3va3pzix/LafPsn4a", redacted=True)
    assert outcome.end.message.content == [redacted, TextContent(text="Found it.")]
    assert [d.index for d in outcome.deltas] == [1]
    start, end = outcome.tool_events
    assert (start.tool_call_id, start.args) == ("srvtoolu_01", {"query": "x"})
    assert (end.tool_call_id, end.is_error) == ("srvtoolu_01", True)
    sent = to_anthropic_messages([user("q"), outcome.end.message, user("more")])
    assert sent[1]["content"] == [
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
        {"type": "text", "text": "Found it."},
    ]
