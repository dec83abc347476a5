"""Aborting a stream closes the HTTP response at once."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest

from agentd.mockllm import MockLLMServer
from agentd.protocol.events import TextDelta
from tests.harness import scaled, wait_until_async
from tests.providers.replay import ChunkStream, Replay, provider_for, request, user

FIRST_CHUNKS = {
    "openai": b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n',
    "anthropic": (
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"Hi"}}\n\n'
    ),
}


def hanging(api: str) -> tuple[Replay, ChunkStream]:
    """A transport whose reply sends one delta, then nothing until closed."""
    body = ChunkStream([FIRST_CHUNKS[api]], hang=True)
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
    return Replay([response]), body


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_cancelling_the_consumer_closes_the_response(api: str) -> None:
    """Cancelling the task that iterates the stream closes the response body."""
    transport, body = hanging(api)
    first = asyncio.Event()

    async def consume(http: httpx.AsyncClient) -> None:
        async for item in provider_for(api, http).stream(request()):
            if isinstance(item, TextDelta):
                first.set()

    async with transport.client() as http:
        task = asyncio.create_task(consume(http))
        await asyncio.wait_for(first.wait(), scaled(5))
        assert not body.closed
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert body.closed


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_closing_the_iterator_closes_the_response(api: str) -> None:
    """``aclose()`` on the stream after the first delta closes the response body."""
    transport, body = hanging(api)
    async with transport.client() as http:
        stream = provider_for(api, http).stream(request())
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            async for item in stream:
                assert isinstance(item, TextDelta)
                break
        assert body.closed


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_cancel_over_real_http_drops_the_connection(api: str) -> None:
    """Against the real mock server, a cancelled slow reply stops streaming server-side."""
    async with MockLLMServer() as server, httpx.AsyncClient() as http:
        provider = provider_for(api, http, base_url=server.url)
        stream = provider.stream(request([user("please be slow")]))
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            async for item in stream:
                if isinstance(item, TextDelta):
                    break
            assert server.active_streams == 1
        await wait_until_async(lambda: server.active_streams == 0, 5, "the stream to close")
