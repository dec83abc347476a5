"""The OpenAI Responses provider parsing recorded event streams (one wire quirk per file),
and the request it sends."""

from __future__ import annotations

from typing import Any

import pytest

from agentd.config.prices import Price
from agentd.protocol.content import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from agentd.providers.responses_messages import decode_reasoning_token
from agentd.toolspec import ToolSpec
from tests.providers.replay import (
    Outcome,
    Replay,
    assert_deltas_match,
    collect,
    error,
    fixture,
    fixture_names,
    provider_for,
    request,
    sse,
    user,
)

API = "openai-responses"


async def replay(name: str, chunk: int | None = None, **options: Any) -> Outcome:
    transport = Replay([sse(fixture(API, name), chunk=chunk)])
    async with transport.client() as http:
        return await collect(provider_for(API, http, **options))


@pytest.mark.parametrize("name", fixture_names(API))
@pytest.mark.parametrize("chunk", [None, 1, 7, 64])
async def test_deltas_rebuild_the_final_message(name: str, chunk: int | None) -> None:
    """Whatever the chunking, the deltas describe exactly the final message's blocks."""
    outcome = await replay(name, chunk)
    assert_deltas_match(outcome.deltas, outcome.end.message)
    assert outcome.end.message.id == "msg-1"


async def test_text_and_cached_usage() -> None:
    """Output text deltas form one text block; cached input tokens count as cache reads."""
    price = Price(input=1.0, output=2.0, cache_read=0.5)
    message = (await replay("text_many_chunks", price=price)).end.message
    assert message.content == [TextContent(text="Hello! The file `hello.py` prints a greeting.")]
    assert message.stop_reason == "stop"
    usage = message.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (120, 20, 31)
    assert usage.cost == pytest.approx((120 * 1.0 + 20 * 0.5 + 31 * 2.0) / 1e6)


async def test_function_call_uses_call_id() -> None:
    """The call's ``call_id`` (not the item id) is the tool call id; pieces are joined."""
    outcome = await replay("function_call")
    message = outcome.end.message
    assert message.stop_reason == "tool_use"
    arguments = {"path": "hello.py", "content": "print('hi')\n"}
    assert message.content == [ToolCall(id="call_Wr1te", name="write", arguments=arguments)]
    assert outcome.order[0] == "ToolCallStartDelta"


async def test_parallel_function_calls() -> None:
    message = (await replay("parallel_function_calls")).end.message
    assert message.content == [
        TextContent(text="Checking both."),
        ToolCall(id="call_A", name="ls", arguments={"path": "src"}),
        ToolCall(id="call_B", name="bash", arguments={"command": "pwd"}),
    ]


async def test_arguments_only_in_done_events() -> None:
    """Arguments that were never streamed come from ``function_call_arguments.done``."""
    outcome = await replay("arguments_only_when_done")
    assert outcome.end.message.content == [
        ToolCall(id="call_Z", name="find", arguments={"pattern": "*.py"}),
        ToolCall(id="call_N", name="ls", arguments={}),
    ]


async def test_reasoning_summary_keeps_the_encrypted_item() -> None:
    """Summary parts become one thinking block; the item id and encrypted content are kept."""
    message = (await replay("reasoning_summary")).end.message
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "**Planning** the user asks for 2+2.\n\nAnswer: 4."
    token = decode_reasoning_token(thinking.signature)
    assert token is not None
    assert (token.id, token.encrypted_content) == ("rs_9f2", "gAAAAABo-enc-blob==")
    assert text == TextContent(text="2 + 2 = 4.")


@pytest.mark.parametrize(
    ("name", "reason", "error_part"),
    [
        ("incomplete_max_tokens", "length", None),
        ("refusal", "error", "refused"),
    ],
)
async def test_stop_reasons(name: str, reason: str, error_part: str | None) -> None:
    message = (await replay(name)).end.message
    assert message.stop_reason == reason
    if error_part is None:
        assert message.error_message is None
    else:
        assert message.error_message is not None
        assert error_part in message.error_message


async def test_truncated_stream_is_an_error_keeping_the_text() -> None:
    transport = Replay([sse(fixture(API, "truncated"))])
    async with transport.client() as http:
        message = (await collect(provider_for(API, http))).end.message
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert "response.completed" in message.error_message
    assert message.content == [TextContent(text="Let me explain")]
    assert len(transport.requests) == 1


async def test_failed_response() -> None:
    message = (await replay("failed")).end.message
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert "upstream connection reset" in message.error_message
    assert message.content == [TextContent(text="Partial")]


async def test_context_length_error_event_flags_overflow() -> None:
    end = (await replay("error_event")).end
    assert end.message.stop_reason == "error"
    assert end.context_overflow


async def test_rate_limit_then_success_is_retried() -> None:
    """A 429 before anything streamed is retried, then the reply streams normally."""
    body = {"error": {"message": "Rate limit reached", "type": "requests", "code": "x"}}
    transport = Replay([error(429, body), sse(fixture(API, "text_many_chunks"))])
    async with transport.client() as http:
        outcome = await collect(provider_for(API, http))
    assert len(outcome.retries) == 1
    assert outcome.end.message.stop_reason == "stop"


async def test_request_body() -> None:
    """System prompt as instructions, stateless, tools flat, history as input items."""
    history = [
        user("list the files"),
        AssistantMessage(
            id="a1",
            content=[
                ThinkingContent(thinking="", signature='{"id":"rs_1","encrypted_content":"E"}'),
                ThinkingContent(thinking="from another provider", signature="sig"),
                TextContent(text="Looking."),
                ToolCall(id="call_1", name="ls", arguments={"path": "."}),
            ],
            provider="openai",
            model="o4-mini",
            usage=Usage(),
            stop_reason="tool_use",
            timestamp=0.0,
        ),
        ToolResultMessage(
            id="t1",
            tool_call_id="call_1",
            tool_name="ls",
            content=[TextContent(text="a.py"), ImageContent(data="AAAA", mime_type="image/png")],
            is_error=False,
            timestamp=0.0,
        ),
    ]
    tools = [ToolSpec(name="ls", description="List", parameters={"type": "object"})]
    transport = Replay([sse(fixture(API, "text_many_chunks"))])
    async with transport.client() as http:
        await collect(provider_for(API, http), request(history, tools, model="o4-mini"))
    assert str(transport.requests[0].url) == "http://llm.test/v1/responses"
    assert transport.requests[0].headers["authorization"] == "Bearer sk-test-key"
    body = transport.body()
    assert body["instructions"] == "You are terse."
    assert (body["stream"], body["store"]) == (True, False)
    assert body["reasoning"] == {"summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "ls",
            "description": "List",
            "parameters": {"type": "object"},
            "strict": False,
        }
    ]
    kinds = [item.get("type") or item["role"] for item in body["input"]]
    assert kinds == [
        "user",
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
        "user",
    ]
    assert body["input"][1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [],
        "encrypted_content": "E",
    }
    assert body["input"][3]["call_id"] == "call_1"
    assert body["input"][4]["output"] == "a.py\n(image attached below)"
    assert body["input"][5]["content"][1] == {
        "type": "input_image",
        "image_url": "data:image/png;base64,AAAA",
    }


async def test_plain_model_gets_no_reasoning_options() -> None:
    transport = Replay([sse(fixture(API, "text_many_chunks"))])
    async with transport.client() as http:
        await collect(provider_for(API, http, model="gpt-4.1-mini"))
    body = transport.body()
    assert "reasoning" not in body
    assert "include" not in body
