"""The providers' HTTP transport: ``http://`` on a small asyncio HTTP/1.1 client, ``https://``
on httpx's own transport, built on first use with certificate verification.

Why two: a daemon started for one ``agentctl send`` against a local server (Ollama, vLLM,
LiteLLM, ``agentd mock-llm``) paid some 80 ms for machinery plain HTTP never uses: httpx's
default transport builds a verifying SSL context from certifi's bundle when the client is made
(30 to 45 ms) and imports httpcore (both its sync and async halves, h11); the first request then
imports anyio and sniffio; each request after that costs about a millisecond more than the
exchange itself. :class:`PlainHttpTransport` speaks HTTP/1.1 directly on asyncio streams
(:mod:`agentd.providers.http1`) and imports nothing beyond httpx's models.

Contract of :class:`ProviderTransport` (an ``httpx.AsyncBaseTransport``):

* ``http`` URLs go to the plain transport; ``https`` URLs to ``httpx.AsyncHTTPTransport``
  made on the first https request with ``verify`` (default: verify against certifi's bundle;
  an ``ssl.SSLContext`` to trust something else); any other scheme is UnsupportedProtocol.
  The plain transport refuses anything but ``http``, so TLS traffic can never go out in clear.
* Environment proxies and ``SSL_CERT_FILE`` are ignored (as with ``trust_env=False``).
* Plain connections are kept alive per origin: at most ``max_idle`` idle ones each, closed
  after ``keepalive_expiry`` seconds idle, and never reused once the server has closed its
  side; a response that is not read to its end closes its connection.
* Timeouts are httpx's per-request ``connect``/``read``/``write`` values.
* :func:`new_http_client` makes an :class:`HttpClient`: httpx's client, whose cookie jar is
  consulted only for responses with a ``Set-Cookie`` header (the same cookies are kept).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from agentd.providers.http1 import Http1Connection, ResponseHead, request_head

Origin = tuple[str, int]


class PlainHttpTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over plain TCP with a keep-alive pool (see the module docstring)."""

    def __init__(self, *, max_idle: int = 20, keepalive_expiry: float = 5.0) -> None:
        self._max_idle = max_idle
        self._keepalive_expiry = keepalive_expiry
        self._idle: dict[Origin, list[Http1Connection]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` and return its response, whose body streams from the socket."""
        url = request.url
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"the plain HTTP transport cannot send {url.scheme}")
        if self._closed:
            raise httpx.ConnectError("the HTTP client is closed")
        timeouts = request.extensions.get("timeout", {})
        origin = (url.host, url.port or 80)
        request_line_and_headers = request_head(request)
        connection = await self._checkout(origin, timeouts.get("connect"))
        try:
            await connection.send(request, request_line_and_headers, timeouts.get("write"))
            head = await connection.read_head(timeouts.get("read"))
        except BaseException:
            connection.close()
            raise
        body = _ResponseBody(connection, head, request.method.encode("ascii"), timeouts)
        body.on_done = lambda: self._checkin(origin, connection)
        return httpx.Response(
            head.status,
            headers=head.headers,
            stream=body,
            extensions={"http_version": head.version, "reason_phrase": head.reason},
        )

    async def aclose(self) -> None:
        """Close every idle connection; later requests fail."""
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    async def _checkout(self, origin: Origin, connect_timeout: float | None) -> Http1Connection:
        """An idle connection to ``origin`` still fit for use, else a new one."""
        idle = self._idle.get(origin, [])
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.reusable and now - connection.idle_since < self._keepalive_expiry:
                return connection
            connection.close()
        return await Http1Connection.open(origin[0], origin[1], connect_timeout)

    def _checkin(self, origin: Origin, connection: Http1Connection) -> None:
        idle = self._idle.setdefault(origin, [])
        if self._closed or not connection.reusable or len(idle) >= self._max_idle:
            connection.close()
            return
        idle.append(connection)
        since = connection.idle_since
        loop = asyncio.get_running_loop()
        loop.call_later(self._keepalive_expiry, self._expire, origin, connection, since)

    def _expire(self, origin: Origin, connection: Http1Connection, since: float) -> None:
        """Close ``connection`` if it is still idle since ``since`` (not reused meanwhile)."""
        idle = self._idle.get(origin, [])
        if connection in idle and connection.idle_since == since:
            idle.remove(connection)
            connection.close()


class _ResponseBody(httpx.AsyncByteStream):
    """A response body read from its connection; the connection goes back to the pool when
    the body was read to its end, and is closed otherwise (``aclose`` before the end)."""

    def __init__(
        self,
        connection: Http1Connection,
        head: ResponseHead,
        method: bytes,
        timeouts: dict[str, float | None],
    ) -> None:
        self._connection = connection
        self._parts = connection.body(head, method, timeouts.get("read"))
        self._finished = False
        self.on_done: Callable[[], None] = lambda: None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._parts:
                yield part
        except BaseException:
            self._connection.close()
            raise
        self._release()

    async def aclose(self) -> None:
        if not self._finished:
            self._connection.close()  # mid-body: the rest would be read by the next request
            self._release()
        with contextlib.suppress(RuntimeError):  # aclose() while it runs: closed with it
            await self._parts.aclose()

    def _release(self) -> None:
        if not self._finished:
            self._finished = True
            self.on_done()


class ProviderTransport(httpx.AsyncBaseTransport):
    """Routes ``http`` to :class:`PlainHttpTransport` and ``https`` to httpx's transport,
    built on first use (see the module docstring)."""

    def __init__(self, verify: ssl.SSLContext | bool = True) -> None:
        self._verify = verify
        self._plain = PlainHttpTransport()
        self._tls: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` on the transport for its scheme."""
        scheme = request.url.scheme
        if scheme == "http":
            return await self._plain.handle_async_request(request)
        if scheme != "https":
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {scheme!r}")
        if self._tls is None:
            self._tls = httpx.AsyncHTTPTransport(verify=self._verify, trust_env=False)
        return await self._tls.handle_async_request(request)

    async def aclose(self) -> None:
        """Close both transports' connections."""
        await self._plain.aclose()
        if self._tls is not None:
            await self._tls.aclose()


class _Cookies(httpx.Cookies):
    """A client's cookie jar that looks at a response only when it sets a cookie: httpx builds
    a urllib request and response around every response to hand them to the jar, which then
    finds no ``Set-Cookie`` (LLM APIs set none). The jar's default policy reads no other
    header (``Set-Cookie2`` is ignored unless RFC 2965 is switched on), so this stores the
    same cookies."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


class HttpClient(httpx.AsyncClient):
    """An ``httpx.AsyncClient`` whose cookie jar is a :class:`_Cookies` (every other
    behaviour is httpx's): for the providers and the in-process mock LLM."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cookies = self._cookies

    @property
    def cookies(self) -> httpx.Cookies:
        return self._cookies

    @cookies.setter
    def cookies(self, cookies: httpx._types.CookieTypes) -> None:
        self._cookies = _Cookies(cookies)


def new_http_client(
    timeout: httpx.Timeout | None = None, verify: ssl.SSLContext | bool = True
) -> httpx.AsyncClient:
    """An HTTP client for the providers on a :class:`ProviderTransport` (share one per daemon;
    close it at shutdown). Redirects are not followed; proxies from the environment are not
    used. The default timeout allows 15 s to connect and 10 minutes between bytes."""
    timeout = timeout or httpx.Timeout(connect=15.0, read=600.0, write=60.0, pool=30.0)
    transport = ProviderTransport(verify=verify)
    return HttpClient(transport=transport, timeout=timeout, trust_env=False, follow_redirects=False)
