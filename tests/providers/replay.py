"""Helpers for provider tests: SSE transcripts replayed through ``httpx.MockTransport``.

The real provider code reads real bytes: a transcript file is served as a streamed response,
cut into chunks of any size. Nothing is patched.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec

from agentd.config.load import ModelChoice
from agentd.config.prices import Price
from agentd.protocol.content import (
    AssistantMessage,
    Message,
    ServerToolCall,
    TextContent,
    ThinkingContent,
    UserMessage,
)
from agentd.protocol.events import (
    Delta,
    Retry,
    TextDelta,
    ThinkingDelta,
    ToolCallStartDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from agentd.providers import RetryPolicy, make_provider
from agentd.providers.assemble import parse_arguments
from agentd.providers.base import Provider, ProviderRequest, StreamEnd
from agentd.providers.http_types import ProviderHttp
from agentd.toolspec import ToolSpec

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"
FAST = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.01, jitter=0.0)


def fixture(api: str, name: str) -> bytes:
    """The bytes of ``tests/fixtures/sse/<api>/<name>.sse``."""
    return (FIXTURES / api / f"{name}.sse").read_bytes()


def fixture_names(api: str) -> list[str]:
    """Every transcript of one wire format."""
    return sorted(path.stem for path in (FIXTURES / api).glob("*.sse"))


class ChunkStream(httpx.AsyncByteStream):
    """A response body sent in the given chunks; optionally hangs after them (until closed)."""

    def __init__(self, chunks: list[bytes], *, hang: bool = False) -> None:
        self.chunks = chunks
        self.hang = hang
        self.closed = False
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.sent += 1
            yield chunk
        if self.hang:
            await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed = True


def split(data: bytes, size: int | None) -> list[bytes]:
    """``data`` in pieces of ``size`` bytes (one piece when size is None)."""
    if size is None:
        return [data]
    return [data[i : i + size] for i in range(0, len(data), size)]


def sse(data: bytes, *, chunk: int | None = None, hang: bool = False) -> httpx.Response:
    """A 200 event-stream response carrying ``data``."""
    headers = {"content-type": "text/event-stream"}
    return httpx.Response(200, headers=headers, stream=ChunkStream(split(data, chunk), hang=hang))


def error(status: int, payload: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    """A JSON error response."""
    body = payload if isinstance(payload, bytes) else msgspec.json.encode(payload)
    all_headers = {"content-type": "application/json", **(headers or {})}
    return httpx.Response(status, headers=all_headers, content=body)


@dataclass
class Replay:
    """A transport answering requests from a script of responses (the last one repeats)."""

    script: list[httpx.Response | Callable[[httpx.Request], httpx.Response]]
    requests: list[httpx.Request] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.script[min(len(self.requests), len(self.script)) - 1]
        return step(request) if callable(step) else step

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def body(self, number: int = 0) -> dict[str, Any]:
        """The decoded JSON body of request ``number``."""
        decoded: dict[str, Any] = msgspec.json.decode(self.requests[number].content)
        return decoded


def choice(
    api: str,
    *,
    model: str = "test-model",
    base_url: str = "http://llm.test/v1",
    api_key: str | None = "sk-test-key",
    price: Price | None = None,
) -> ModelChoice:
    """A ModelChoice for tests."""
    provider = "anthropic" if api == "anthropic" else "openai"
    return ModelChoice(provider, api, model, base_url, api_key, None, price)  # type: ignore[arg-type]


def provider_for(
    api: str, http: ProviderHttp | httpx.AsyncClient, retry: RetryPolicy = FAST, **options: Any
) -> Provider:
    """A real provider of ``api`` sending through ``http``."""
    return make_provider(choice(api, **options), http, retry=retry)


def user(text: str) -> UserMessage:
    return UserMessage(id="u1", content=[TextContent(text=text)], timestamp=0.0)


def request(
    messages: list[Message] | None = None,
    tools: list[ToolSpec] | None = None,
    *,
    model: str = "test-model",
    system: str = "You are terse.",
) -> ProviderRequest:
    return ProviderRequest(
        model=model,
        system_prompt=system,
        messages=messages if messages is not None else [user("hi")],
        tools=tools or [],
        message_id="msg-1",
    )


@dataclass
class Outcome:
    """Everything a stream yielded, split by kind."""

    deltas: list[Delta]
    retries: list[Retry]
    end: StreamEnd
    order: list[str]
    tool_events: list[ToolExecutionStart | ToolExecutionEnd] = field(default_factory=list)


async def collect(provider: Provider, req: ProviderRequest | None = None) -> Outcome:
    """Drain one stream; checks that exactly one StreamEnd comes, last."""
    deltas: list[Delta] = []
    retries: list[Retry] = []
    ends: list[StreamEnd] = []
    order: list[str] = []
    tool_events: list[ToolExecutionStart | ToolExecutionEnd] = []
    async for item in provider.stream(req or request()):
        assert not ends, "nothing may follow the StreamEnd"
        order.append(type(item).__name__)
        if isinstance(item, StreamEnd):
            ends.append(item)
        elif isinstance(item, Retry):
            retries.append(item)
        elif isinstance(item, ToolExecutionStart | ToolExecutionEnd):
            tool_events.append(item)
        else:
            deltas.append(item)
    assert len(ends) == 1
    return Outcome(deltas, retries, ends[0], order, tool_events)


def rebuild(deltas: list[Delta]) -> dict[int, dict[str, str]]:
    """The content blocks the deltas describe, by index."""
    blocks: dict[int, dict[str, str]] = {}
    for delta in deltas:
        if isinstance(delta, TextDelta | ThinkingDelta):
            kind = "text" if isinstance(delta, TextDelta) else "thinking"
            block = blocks.setdefault(delta.index, {"type": kind, "text": ""})
            assert block["type"] == kind
            block["text"] += delta.text
        elif isinstance(delta, ToolCallStartDelta):
            assert delta.index not in blocks
            blocks[delta.index] = {"type": "tool_call", "id": delta.id, "name": delta.name}
            blocks[delta.index]["arguments"] = ""
        else:
            blocks[delta.index]["arguments"] += delta.arguments
    return blocks


def assert_deltas_match(deltas: list[Delta], message: AssistantMessage) -> None:
    """The deltas rebuild exactly the final message's content; only blocks that arrive whole
    (redacted thinking) have no deltas."""
    rebuilt = rebuild(deltas)
    whole = {
        i
        for i, c in enumerate(message.content)
        if (isinstance(c, ThinkingContent) and c.redacted) or isinstance(c, ServerToolCall)
    }
    assert sorted(rebuilt) == [i for i in range(len(message.content)) if i not in whole]
    for index, block in rebuilt.items():
        content = message.content[index]
        if isinstance(content, TextContent):
            assert block == {"type": "text", "text": content.text}
        elif isinstance(content, ThinkingContent):
            assert block == {"type": "thinking", "text": content.thinking}
        else:
            assert (block["type"], block["id"], block["name"]) == (
                "tool_call",
                content.id,
                content.name,
            )
            assert parse_arguments(block["arguments"]) == (content.arguments, content.parse_error)
