"""The streaming driver shared by every provider: POST, retry, decode SSE, end the stream.

:func:`stream_reply` implements the provider contract (see ``base.py``) once: it yields the
parser's deltas, ``Retry`` events before each backoff sleep (only while nothing has been
streamed), and exactly one final ``StreamEnd``; failures become an error message instead of an
exception. The HTTP response is closed in a ``finally``, so cancelling the consuming task or
closing the iterator closes the connection at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, cast

import msgspec

from agentd.config.prices import Price, find_price
from agentd.log import get_logger
from agentd.protocol.events import Retry, ToolExecutionEnd, ToolExecutionStart
from agentd.providers.assemble import MessageBuilder, Parsed, ReplyParser
from agentd.providers.base import ProviderRequest, StreamEnd, StreamItem
from agentd.providers.errors import (
    ProviderFailure,
    failure_from_error_object,
    failure_from_response,
    translating_http_errors,
)
from agentd.providers.http_failures import HttpFailure
from agentd.providers.http_types import ProviderHttp, ProviderResponse, Timeouts
from agentd.providers.retry import RetryPolicy
from agentd.providers.server_search import failed_end
from agentd.providers.sse import SSEDecoder

if TYPE_CHECKING:
    import httpx

log = get_logger("agentd.providers")

_ERROR_BODY_LIMIT = 64 * 1024
_FINISH_SECONDS = 0.05


class HttpCall(msgspec.Struct, frozen=True):
    """One provider request, ready to send (and to send again on retry)."""

    url: str
    headers: dict[str, str]  # carries the API key
    body: bytes

    def __repr__(self) -> str:  # the headers carry the API key: never shown
        return f"HttpCall(url={self.url!r}, headers=<hidden>, body=<{len(self.body)} bytes>)"


async def stream_reply(
    http: ProviderHttp,
    call: HttpCall,
    new_parser: Callable[[], ReplyParser],
    policy: RetryPolicy,
) -> AsyncGenerator[StreamItem, None]:
    """Stream one reply with retries. Never raises except for cancellation."""
    attempt = 1
    while True:
        parser = new_parser()
        streamed = False
        try:
            async with contextlib.aclosing(_attempt(http, call, parser, policy)) as deltas:
                async for delta in deltas:
                    streamed = True
                    yield delta
            yield StreamEnd(parser.finish())
            return
        except ProviderFailure as failure:
            if streamed or not failure.retryable or attempt >= policy.max_attempts:
                log.info("provider call failed", url=call.url, error=failure.message)
                yield _error_end(parser, failure)
                return
            delay = policy.delay(attempt, failure.retry_after)
            log.info("provider call retried", url=call.url, attempt=attempt, delay=delay)
            yield Retry(
                attempt=attempt,
                max_attempts=policy.max_attempts,
                delay_ms=round(delay * 1000),
                error=failure.message,
            )
            await asyncio.sleep(delay)
            attempt += 1
        except Exception as exc:  # a parsing bug must not take the agent loop down
            log.exception("provider stream crashed", url=call.url)
            yield _error_end(parser, ProviderFailure(f"internal error in the provider: {exc!r}"))
            return


def _error_end(parser: ReplyParser, failure: ProviderFailure) -> StreamEnd:
    return StreamEnd(parser.failed(failure.message), context_overflow=failure.context_overflow)


async def _attempt(
    http: ProviderHttp, call: HttpCall, parser: ReplyParser, policy: RetryPolicy
) -> AsyncGenerator[Parsed, None]:
    """One HTTP attempt: yields deltas until the parser is complete or the body ends."""
    timeouts = Timeouts(policy.connect_timeout, policy.read_timeout, policy.read_timeout)
    async with translating_http_errors(call.url):
        response = await http.open(
            "POST", call.url, headers=call.headers, body=call.body, timeouts=timeouts
        )
        try:
            await _check_response(response)
            decoder = SSEDecoder()
            chunks = response.aiter_bytes()
            async for chunk in chunks:
                for event in decoder.feed(chunk):
                    for delta in parser.feed(event):
                        yield delta
                if parser.complete:
                    await _finish_body(chunks)
                    return
        finally:
            await response.aclose()


async def _finish_body(chunks: AsyncIterator[bytes]) -> None:
    """Read what is left of a complete reply's body (normally just its end: the last chunk of
    the transfer encoding) so that the connection can carry the next request instead of being
    closed: no new connection, and no new TLS handshake, for the next turn. A server that keeps
    the body open longer than ``_FINISH_SECONDS`` or sends more than ``_ERROR_BODY_LIMIT`` bytes
    after the end of the reply just gets its connection closed."""
    left = _ERROR_BODY_LIMIT
    with contextlib.suppress(TimeoutError, HttpFailure):
        async with asyncio.timeout(_FINISH_SECONDS):
            async for chunk in chunks:
                left -= len(chunk)
                if left < 0:
                    return


async def _check_response(response: ProviderResponse) -> None:
    """Raise ProviderFailure unless the response is a 2xx event stream."""
    content_type = response.headers.get("content-type", "")
    if response.is_success and "json" not in content_type:
        return
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= _ERROR_BODY_LIMIT:
            break
    if not response.is_success:
        raise failure_from_response(response.status_code, response.headers, bytes(body))
    try:
        decoded = msgspec.json.decode(bytes(body))
    except msgspec.DecodeError:
        decoded = None
    if isinstance(decoded, dict) and "error" in decoded:
        raise failure_from_error_object(decoded["error"])
    shown = bytes(body[:200]).decode("utf-8", "replace")
    raise ProviderFailure(f"expected an event stream, got {content_type}: {shown}")


BaseUrl = str | Callable[[], Awaitable[str]]
"""A provider's base URL, or an async function returning it (resolved before each call)."""


class HttpProvider:
    """Plumbing shared by the HTTP providers; subclasses build the call and the parser."""

    def __init__(
        self,
        http: ProviderHttp | httpx.AsyncClient,
        *,
        name: str,
        model: str,
        base_url: BaseUrl,
        api_key: str | None,
        price: Price | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.name = name
        self.http = _provider_http(http)
        self.model = model
        self.api_key = api_key
        self.retry = retry or RetryPolicy()
        self._base_url = base_url
        self._price = price

    def build_call(self, request: ProviderRequest, base_url: str) -> HttpCall:
        """The HTTP request for ``request`` (wire-format specific)."""
        raise NotImplementedError

    def new_parser(self, builder: MessageBuilder) -> ReplyParser:
        """A parser for one attempt's event stream (wire-format specific)."""
        raise NotImplementedError

    def price_of(self, model: str) -> Price | None:
        """The configured price for this provider's model, else the built-in table's."""
        configured = self._price if model == self.model else None
        return configured or find_price(model)

    async def stream(self, request: ProviderRequest) -> AsyncGenerator[StreamItem, None]:
        """Stream one reply (see the provider contract in ``base.py``)."""

        def new_builder() -> MessageBuilder:
            return MessageBuilder(
                message_id=request.message_id,
                provider=self.name,
                model=request.model,
                price=self.price_of(request.model),
            )

        try:
            base_url = self._base_url if isinstance(self._base_url, str) else await self._base_url()
        except Exception as exc:
            log.exception("provider base URL unavailable", provider=self.name)
            yield StreamEnd(new_builder().build("error", f"the provider is unavailable: {exc}"))
            return
        call = self.build_call(request, base_url)
        replies = stream_reply(self.http, call, lambda: self.new_parser(new_builder()), self.retry)
        searching: set[str] = set()  # provider-side calls started and not ended
        async with contextlib.aclosing(replies) as items:
            async for item in items:
                if isinstance(item, ToolExecutionStart):
                    searching.add(item.tool_call_id)
                elif isinstance(item, ToolExecutionEnd):
                    searching.discard(item.tool_call_id)
                elif isinstance(item, StreamEnd):
                    for call_id in sorted(searching):  # the reply broke off mid-call
                        yield failed_end(call_id)
                yield item


def _provider_http(http: ProviderHttp | httpx.AsyncClient) -> ProviderHttp:
    """``http`` as a ProviderHttp: an ``httpx.AsyncClient`` (a test's, a caller's) is wrapped
    in :class:`~agentd.providers.httpx_client.HttpxClient`; httpx is not imported otherwise."""
    httpx_module = sys.modules.get("httpx")
    if httpx_module is not None and isinstance(http, httpx_module.AsyncClient):
        from agentd.providers.httpx_client import HttpxClient

        return HttpxClient(http)
    return cast("ProviderHttp", http)
