"""An ``httpx.AsyncClient`` as a :class:`~agentd.providers.transport.ProviderHttp`: the https
half of the providers' client, the in-process mock LLM's client, and any client a caller brings.

httpx's exceptions become :mod:`agentd.providers.http_failures`' here, while sending and while
the body streams, so the providers see one set of failures whichever client they use:
``UnsupportedProtocol``/``InvalidURL`` → ``UnsupportedUrl``; ``ConnectError``/``ConnectTimeout``
→ ``ConnectFailed``; other timeouts → ``TimedOut``; ``LocalProtocolError`` → ``RequestRefused``;
other transport errors → ``ConnectionBroken``; anything else httpx raises → ``HttpFailure``.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import httpx

from agentd.providers.http_failures import (
    ConnectFailed,
    ConnectionBroken,
    HttpFailure,
    RequestRefused,
    TimedOut,
    UnsupportedUrl,
)
from agentd.providers.http_types import ProviderResponse, Timeouts


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        raise UnsupportedUrl(_detail(exc)) from exc
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise ConnectFailed(_detail(exc)) from exc
    except httpx.TimeoutException as exc:
        raise TimedOut(_detail(exc)) from exc
    except httpx.LocalProtocolError as exc:
        raise RequestRefused(_detail(exc)) from exc
    except httpx.TransportError as exc:
        raise ConnectionBroken(_detail(exc)) from exc
    except httpx.HTTPError as exc:
        raise HttpFailure(_detail(exc)) from exc


def _detail(exc: Exception) -> str:
    return str(exc) or type(exc).__name__


class _Response:
    """An httpx streamed response as a :class:`ProviderResponse`."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status_code = response.status_code
        self.headers: Mapping[str, str] = response.headers

    @property
    def is_success(self) -> bool:
        return self._response.is_success

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        with _translated():
            async for part in self._response.aiter_bytes():
                yield part

    async def aclose(self) -> None:
        with _translated():
            await self._response.aclose()


class HttpxClient:
    """Sends through ``client`` (see the module docstring); :meth:`aclose` closes it."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

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
        timeout: Any = httpx.USE_CLIENT_DEFAULT
        if timeouts is not None:
            timeout = httpx.Timeout(
                timeouts.read, connect=timeouts.connect, write=timeouts.write, pool=timeouts.read
            )
        with _translated():
            request = self.client.build_request(
                method, url, headers=dict(headers or {}), content=body, timeout=timeout
            )
            return _Response(await self.client.send(request, stream=True))

    async def aclose(self) -> None:
        await self.client.aclose()


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
    behaviour is httpx's): for https and the in-process mock LLM."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cookies = self._cookies

    @property
    def cookies(self) -> httpx.Cookies:
        return self._cookies

    @cookies.setter
    def cookies(self, cookies: httpx._types.CookieTypes) -> None:
        self._cookies = _Cookies(cookies)


def tls_client(verify: ssl.SSLContext | bool = True) -> HttpxClient:
    """The client for ``https`` provider URLs: certificates verified (against certifi's bundle,
    or ``verify``'s context), no environment proxies or ``SSL_CERT_FILE``, no redirects."""
    transport = httpx.AsyncHTTPTransport(verify=verify, trust_env=False)
    client = HttpClient(transport=transport, trust_env=False, follow_redirects=False)
    return HttpxClient(client)


def as_provider_http(client: Any) -> Any:
    """``client`` as a ProviderHttp: an ``httpx.AsyncClient`` wrapped, anything else as is."""
    return HttpxClient(client) if isinstance(client, httpx.AsyncClient) else client
