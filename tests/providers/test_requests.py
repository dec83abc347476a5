"""What the providers send: URLs, headers and our conversation in each wire format."""

from __future__ import annotations

from typing import Any

import pytest

from agentd.protocol.content import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from agentd.providers.transform import MISSING_RESULT, prepare_messages
from agentd.toolspec import ToolSpec
from tests.providers.replay import Replay, collect, fixture, provider_for, request, sse, user

IMAGE = ImageContent(data="aGk=", mime_type="image/png")
TOOLS = [ToolSpec("read", "Read a file.", {"type": "object", "properties": {}})]


def assistant(*content: Any, stop: str = "tool_use") -> AssistantMessage:
    return AssistantMessage(
        id="a",
        content=list(content),
        provider="p",
        model="m",
        stop_reason=stop,  # type: ignore[arg-type]
    )


def result(call_id: str, *content: Any, error: bool = False) -> ToolResultMessage:
    blocks = list(content) or [TextContent(text="ok")]
    return ToolResultMessage(
        id="r", tool_call_id=call_id, tool_name="read", content=blocks, is_error=error
    )


CONVERSATION: list[Message] = [
    user("read two files"),
    assistant(
        ThinkingContent(thinking="plan", signature="sig-1"),
        TextContent(text="Reading."),
        ToolCall(id="call.1", name="read", arguments={"path": "a"}),
        ToolCall(id="call_2", name="read", arguments={"path": "b"}),
    ),
    result("call.1", TextContent(text="A"), IMAGE),
    result("call_2", TextContent(text="B"), error=True),
    UserMessage(id="u2", content=[TextContent(text="and now?"), IMAGE], timestamp=0.0),
]


async def sent_body(
    api: str, messages: list[Message], **options: Any
) -> tuple[Replay, dict[str, Any]]:
    name = "text_many_chunks" if api == "openai" else "text_reply"
    transport = Replay([sse(fixture(api, name))])
    async with transport.client() as http:
        await collect(provider_for(api, http, **options), request(messages, TOOLS))
    return transport, transport.body()


async def test_openai_request_shape() -> None:
    """Streaming with usage, tools as functions, bearer auth, ``{base_url}/chat/completions``."""
    transport, body = await sent_body("openai", [user("hi")], base_url="http://llm.test/v1/")
    sent = transport.requests[0]
    assert str(sent.url) == "http://llm.test/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test-key"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 8192
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a file.",
            "parameters": TOOLS[0].parameters,
        },
    }


async def test_openai_official_endpoint_uses_max_completion_tokens() -> None:
    """api.openai.com gets ``max_completion_tokens``; no key means no auth header."""
    transport, body = await sent_body(
        "openai", [user("hi")], base_url="https://api.openai.com/v1", api_key=None
    )
    assert "max_tokens" not in body
    assert body["max_completion_tokens"] == 8192
    assert "authorization" not in transport.requests[0].headers


async def test_openai_messages() -> None:
    """System first; tool calls with JSON string arguments; tool results as ``tool``;
    images as data URLs, tool-result images in a user message after the tool messages."""
    _, body = await sent_body("openai", CONVERSATION)
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": "You are terse."}
    assert messages[1] == {"role": "user", "content": "read two files"}
    assert messages[2]["role"] == "assistant"
    assert messages[2]["content"] == "Reading."
    assert [c["function"]["arguments"] for c in messages[2]["tool_calls"]] == [
        '{"path":"a"}',
        '{"path":"b"}',
    ]
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "call.1",
        "content": "A\n(image attached below)",
    }
    assert messages[4] == {"role": "tool", "tool_call_id": "call_2", "content": "B"}
    assert messages[5]["role"] == "user"
    assert messages[5]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,aGk="},
    }
    assert messages[6]["content"] == [
        {"type": "text", "text": "and now?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}},
    ]


async def test_anthropic_request_shape() -> None:
    """``/v1/messages`` added to a bare host, key and version headers, cached system prompt."""
    transport, body = await sent_body("anthropic", [user("hi")], base_url="https://claude.test")
    sent = transport.requests[0]
    assert str(sent.url) == "https://claude.test/v1/messages"
    assert sent.headers["x-api-key"] == "sk-test-key"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"] == [
        {"name": "read", "description": "Read a file.", "input_schema": TOOLS[0].parameters}
    ]
    assert body["stream"] is True
    assert body["max_tokens"] == 8192


async def test_anthropic_base_url_ending_in_v1() -> None:
    """A base URL that already ends in /v1 gets only /messages."""
    transport, _ = await sent_body("anthropic", [user("hi")], base_url="http://mock.test/v1")
    assert str(transport.requests[0].url) == "http://mock.test/v1/messages"


async def test_anthropic_messages() -> None:
    """thinking with signature, tool_use with sanitised ids, tool results merged with the next
    user message into one user turn, images as base64 sources, last block cached."""
    _, body = await sent_body("anthropic", CONVERSATION)
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    thinking, text, first, second = messages[1]["content"]
    assert thinking == {"type": "thinking", "thinking": "plan", "signature": "sig-1"}
    assert text == {"type": "text", "text": "Reading."}
    assert first == {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a"}}
    assert second["id"] == "call_2"
    blocks = messages[2]["content"]
    assert [b["type"] for b in blocks] == ["tool_result", "tool_result", "text", "image"]
    assert blocks[0]["tool_use_id"] == "call_1"
    assert blocks[0]["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": "aGk=",
    }
    assert blocks[1]["is_error"] is True
    assert "is_error" not in blocks[0]
    assert blocks[-1]["cache_control"] == {"type": "ephemeral"}


async def test_anthropic_drops_unsigned_thinking_and_empty_text() -> None:
    """Reasoning without a signature and empty text blocks are not sent."""
    conversation: list[Message] = [
        user("q"),
        assistant(
            ThinkingContent(thinking="hmm"),
            TextContent(text=""),
            TextContent(text="A"),
            stop="stop",
        ),
        user("more"),
    ]
    _, body = await sent_body("anthropic", conversation)
    assert body["messages"][1]["content"] == [{"type": "text", "text": "A"}]


def test_failed_replies_are_dropped_and_missing_results_filled() -> None:
    """Errored or aborted replies (and their results) go; unanswered calls get an error result."""
    conversation: list[Message] = [
        user("q"),
        assistant(ToolCall(id="x", name="read"), stop="aborted"),
        result("x"),
        assistant(TextContent(text="partial"), stop="error"),
        assistant(ToolCall(id="y", name="read"), ToolCall(id="z", name="read")),
        result("z"),
        result("unknown"),
        user("again"),
    ]
    prepared = prepare_messages(conversation)
    kinds = [type(m).__name__ for m in prepared]
    assert kinds == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "UserMessage",
    ]
    filled = prepared[3]
    assert isinstance(filled, ToolResultMessage)
    assert (filled.tool_call_id, filled.is_error) == ("y", True)
    assert filled.content == [TextContent(text=MISSING_RESULT)]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_trailing_call_without_result_is_answered(api: str) -> None:
    """The providers never send a tool call without a result."""
    conversation: list[Message] = [user("q"), assistant(ToolCall(id="t1", name="read"))]
    _, body = await sent_body(api, conversation)
    text = str(body["messages"])
    assert "t1" in text
    assert MISSING_RESULT in text
