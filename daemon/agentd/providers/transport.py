"""The providers' HTTP client: ``http://`` on agentd's own HTTP/1.1 client, without httpx;
``https://`` through httpx, imported and built on the first https request.

Why two: most one-shot runs and batch tasks talk to a server on the local machine or network
(Ollama, vLLM, LiteLLM, llama.cpp, ``agentd mock-llm``) over plain HTTP. httpx costs such a run
about 35 ms of imports (its models pull in ``email``, ``http.client``, ``http.cookiejar``,
``urllib.request`` and ``idna``) and 3 MiB, its default transport another 30 to 45 ms for a
verifying SSL context and httpcore, and each request about a millisecond of machinery plain HTTP
never uses. :class:`ProviderClient` therefore speaks HTTP/1.1 itself for ``http`` URLs
(:mod:`agentd.providers.http1`) and hands ``https`` URLs to
:class:`~agentd.providers.httpx_client.HttpxClient`.

Contract of :class:`ProviderClient` (a :class:`~agentd.providers.http_types.ProviderHttp`):

* :meth:`~ProviderClient.open` sends one request and returns its response once the head has
  arrived; the body streams from the socket (a ``ProviderResponse``). Failures are
  :mod:`agentd.providers.http_failures`' exceptions, for both schemes; any other scheme, or a
  malformed URL, is ``UnsupportedUrl``. The plain client never sends an ``https`` URL, so TLS
  traffic cannot go out in clear.
* ``https``: certificates verified against certifi's bundle by default, or the given
  ``ssl.SSLContext``; ``SSL_CERT_FILE`` and proxy variables are not read; redirects are not
  followed; httpx keeps the cookies.
* ``http``: connections kept alive per origin: at most ``max_idle`` idle ones each, closed
  after ``keepalive_expiry`` seconds idle, never reused once the server has closed its side; a
  response not read to its end closes its connection. Sent with each request: ``Host``,
  ``Accept: */*``, ``User-Agent: agentd/VERSION``, ``Content-Length`` when there is a body, and
  the cookies the host has set (see :class:`CookieJar`); the caller's headers replace these.
  No compression is asked for, so bodies arrive as sent.
* Timeouts (``Timeouts``) apply per phase: connecting, writing the request, each read.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote, urlsplit

from agentd import __version__
from agentd.providers.http1 import Http1Connection, ResponseHead, request_head
from agentd.providers.http_failures import ConnectFailed, UnsupportedUrl
from agentd.providers.http_types import ProviderResponse, Timeouts

if TYPE_CHECKING:
    import ssl

    from agentd.providers.httpx_client import HttpxClient

Origin = tuple[str, int]
_USER_AGENT = f"agentd/{__version__}"
_PATH_SAFE = "/%:@!$&'()*+,;=-._~?"


class CookieJar:
    """The cookies plain-HTTP servers set (a load balancer's stickiness cookie, say), kept per
    host for the client's life and sent back to the same host. Simpler than a browser's:
    ``Max-Age=0`` (or negative) deletes a cookie, and the other attributes (``Path``,
    ``Domain``, ``Expires``, ``Secure``) are not looked at."""

    def __init__(self) -> None:
        self._by_host: dict[str, dict[str, str]] = {}

    def take(self, host: str, set_cookies: list[bytes]) -> None:
        """Store what ``Set-Cookie`` headers from ``host`` set."""
        for raw in set_cookies:
            pair, *attributes = raw.decode("latin-1").split(";")
            name, equals, value = pair.partition("=")
            if not equals or not name.strip():
                continue
            cookies = self._by_host.setdefault(host, {})
            if any(_expires_now(attribute) for attribute in attributes):
                cookies.pop(name.strip(), None)
            else:
                cookies[name.strip()] = value.strip()

    def header(self, host: str) -> str | None:
        """The ``Cookie`` header for a request to ``host`` (None: no cookie)."""
        cookies = self._by_host.get(host)
        return "; ".join(f"{name}={value}" for name, value in cookies.items()) if cookies else None

    def get(self, host: str, name: str) -> str | None:
        """The value of cookie ``name`` set by ``host``."""
        return self._by_host.get(host, {}).get(name)


def _expires_now(attribute: str) -> bool:
    name, _, value = attribute.partition("=")
    if name.strip().lower() != "max-age":
        return False
    try:
        return int(value.strip()) <= 0
    except ValueError:
        return False


class PlainResponse:
    """A response read from its connection (a ``ProviderResponse``); the connection goes
    back to the pool when the body was read to its end, and is closed otherwise."""

    def __init__(
        self,
        connection: Http1Connection,
        head: ResponseHead,
        parts: AsyncGenerator[bytes, None],
        on_done: Callable[[], None],
    ) -> None:
        self.status_code = head.status
        self.headers: Mapping[str, str] = _headers(head)
        self._connection = connection
        self._parts = parts
        self._on_done = on_done
        self._finished = False

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._parts:
                if part:
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
            self._on_done()


def _headers(head: ResponseHead) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw_name, raw_value in head.headers:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


class _Target(NamedTuple):
    scheme: str
    host: str
    port: int
    path: str  # path and query, as sent


def _split(url: str) -> _Target:
    """The parts of ``url`` a request needs (UnsupportedUrl if it has none)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsupportedUrl(f"malformed URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise UnsupportedUrl(f"unsupported URL scheme {scheme!r}")
    if not parts.hostname:
        raise UnsupportedUrl("the URL has no host")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    if not path.isascii() or " " in path:
        path = quote(path, safe=_PATH_SAFE)
    default = 443 if scheme == "https" else 80
    return _Target(scheme, parts.hostname, port or default, path)


class ProviderClient:
    """The providers' HTTP client (see the module docstring); share one per daemon and close
    it at shutdown."""

    def __init__(
        self,
        timeouts: Timeouts | None = None,
        verify: ssl.SSLContext | bool = True,
        *,
        max_idle: int = 20,
        keepalive_expiry: float = 5.0,
    ) -> None:
        self.timeouts = timeouts or Timeouts()
        self.cookies = CookieJar()
        self._verify = verify
        self._max_idle = max_idle
        self._keepalive_expiry = keepalive_expiry
        self._idle: dict[Origin, list[Http1Connection]] = {}
        self._tls: HttpxClient | None = None
        self._closed = False

    async def __aenter__(self) -> ProviderClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def open(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        timeouts: Timeouts | None = None,
    ) -> ProviderResponse:
        """Send one request; its response once the head has arrived."""
        timeouts = timeouts or self.timeouts
        target = _split(url)
        if self._closed:
            raise ConnectFailed("the HTTP client is closed")
        if target.scheme == "https":
            tls = self._tls_client()
            return await tls.open(method, url, headers=headers, body=body, timeouts=timeouts)
        origin = (target.host, target.port)
        head = request_head(method, target.path, self._head_fields(method, target, headers, body))
        connection = await self._checkout(origin, timeouts.connect)
        try:
            await connection.send(head, body, timeouts.write)
            response_head = await connection.read_head(timeouts.read)
        except BaseException:
            connection.close()
            raise
        if set_cookies := response_head.values(b"set-cookie"):
            self.cookies.take(target.host, set_cookies)
        parts = connection.body(response_head, method.encode("ascii"), timeouts.read)
        return PlainResponse(
            connection, response_head, parts, lambda: self._checkin(origin, connection)
        )

    async def aclose(self) -> None:
        """Close every idle connection (and the https client); later requests fail."""
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()
        if self._tls is not None:
            await self._tls.aclose()

    def _head_fields(
        self, method: str, target: _Target, headers: Mapping[str, str] | None, body: bytes
    ) -> list[tuple[str, str]]:
        host = f"[{target.host}]" if ":" in target.host else target.host
        fields = {
            "host": ("Host", host if target.port == 80 else f"{host}:{target.port}"),
            "accept": ("Accept", "*/*"),
            "user-agent": ("User-Agent", _USER_AGENT),
        }
        if body or method in ("POST", "PUT", "PATCH"):
            fields["content-length"] = ("Content-Length", str(len(body)))
        if cookie := self.cookies.header(target.host):
            fields["cookie"] = ("Cookie", cookie)
        for name, value in (headers or {}).items():
            fields[name.lower()] = (name, value)
        return list(fields.values())

    def _tls_client(self) -> HttpxClient:
        if self._tls is None:
            from agentd.providers.httpx_client import tls_client

            self._tls = tls_client(self._verify)
        return self._tls

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


def new_http_client(
    timeouts: Timeouts | None = None, verify: ssl.SSLContext | bool = True
) -> ProviderClient:
    """The providers' HTTP client (see :class:`ProviderClient`)."""
    return ProviderClient(timeouts, verify)
