"""One ``web_fetch`` GET: redirects followed by hand, each hop through the SSRF guard and
connected to the address that was checked.

Each hop resolves its host once (:func:`agentd.tools.net.guard.resolve`) and requests the URL
with that address in place of the name, the ``Host`` header and (for https) the TLS server
name set to the real host, so certificates are verified against the name while the socket
goes to the checked address: no DNS-rebinding gap. Nothing identifying is sent: no cookies
(none are kept between hops), no ``Authorization``, no proxy or ``.netrc`` from the
environment (``trust_env`` off). Limits: :data:`MAX_REDIRECTS` redirects, ``timeout`` seconds
for the whole fetch, ``max_bytes`` of body as sent and ``max_bytes`` once decoded (a longer body
is an error, not a cut). The body's content codings are undone here, not by httpx
(:mod:`agentd.tools.net.decode`: bounded, at most two), each received chunk in ``executor``
(off the event loop), so a decompression bomb costs neither memory nor the loop's time.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, urljoin

import msgspec

from agentd.tools.base import ToolError
from agentd.tools.net.decode import ACCEPT_ENCODING, BodyDecoder, too_big
from agentd.tools.net.guard import Resolver, check_url, resolve, system_resolver

if TYPE_CHECKING:
    import httpx

MAX_REDIRECTS = 5
USER_AGENT = "agentd-web-fetch/1 (+https://github.com/agentd)"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class Fetched(msgspec.Struct, frozen=True):
    """A fetched body: the final URL, its status, its ``Content-Type`` and the raw bytes."""

    url: str
    status: int
    content_type: str
    body: bytes
    redirects: int = 0


async def fetch(
    url: str,
    *,
    allow_hosts: Sequence[str] = (),
    secrets: Sequence[str] = (),
    timeout: float = 15.0,
    max_bytes: int = 5 * 1024 * 1024,
    resolver: Resolver = system_resolver,
    executor: Executor | None = None,
) -> Fetched:
    """GET ``url`` within the limits (see the module docstring); ToolError otherwise.
    ``resolver`` answers each hop's one name lookup; ``executor`` decodes the body (None:
    the loop's default executor)."""
    import httpx

    try:
        async with asyncio.timeout(timeout):
            return await _follow(url, allow_hosts, secrets, _Limits(max_bytes, executor), resolver)
    except TimeoutError:
        raise ToolError(f"The fetch of {url} timed out after {timeout:g} s.") from None
    except httpx.HTTPError as error:
        raise ToolError(f"The fetch of {url} failed: {error or type(error).__name__}.") from None


async def _follow(
    url: str,
    allow_hosts: Sequence[str],
    secrets: Sequence[str],
    limits: _Limits,
    resolver: Resolver,
) -> Fetched:
    for hop in range(MAX_REDIRECTS + 1):
        parts = check_url(url, secrets)
        address = await resolve(parts.hostname or "", _port(parts), allow_hosts, resolver)
        response_url, status, location, content_type, body = await _get(parts, address, limits)
        if status not in _REDIRECTS or location is None:
            return Fetched(response_url, status, content_type, body, hop)
        url = urljoin(url, location)
    raise ToolError(f"Too many redirects: stopped after {MAX_REDIRECTS}.")


def _port(parts: SplitResult) -> int:
    return parts.port or (443 if parts.scheme == "https" else 80)


class _Limits(msgspec.Struct, frozen=True):
    max_bytes: int
    executor: Executor | None


async def _get(
    parts: SplitResult, address: str, limits: _Limits
) -> tuple[str, int, str | None, str, bytes]:
    """One hop to the checked ``address``: (its URL, status, Location, Content-Type, body)."""
    import httpx

    host = parts.hostname or ""
    port = _port(parts)
    netloc = f"[{address}]" if ":" in address else address
    pinned = parts._replace(netloc=f"{netloc}:{port}").geturl()
    host_header = parts.netloc.rsplit("@", 1)[-1]
    headers = {
        "Host": host_header,
        "User-Agent": USER_AGENT,
        "Accept": _ACCEPT,
        "Accept-Encoding": ACCEPT_ENCODING,
    }
    extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
    verify = await _tls_context(limits.executor)
    async with httpx.AsyncClient(
        trust_env=False, follow_redirects=False, timeout=None, verify=verify
    ) as client:
        request = client.build_request("GET", pinned, headers=headers, extensions=extensions)
        response = await client.send(request, stream=True)
        try:
            body = await _read(response, limits)
        finally:
            await response.aclose()
    location = response.headers.get("location")
    return (
        parts.geturl(),
        response.status_code,
        location,
        response.headers.get("content-type", ""),
        body,
    )


async def _tls_context(executor: Executor | None) -> ssl.SSLContext:
    """The TLS context every fetch verifies with (httpx's defaults: certifi's roots), made
    once and in ``executor``: loading the roots takes a tenth of a second or more, which on
    the event loop every other client would wait for."""
    global _TLS
    if _TLS is None:
        import httpx

        loop = asyncio.get_running_loop()
        _TLS = await loop.run_in_executor(executor, httpx.create_ssl_context)
    return _TLS


_TLS: ssl.SSLContext | None = None


async def _read(response: httpx.Response, limits: _Limits) -> bytes:
    """The body, its codings undone chunk by chunk in the executor, within the limits."""
    max_bytes = limits.max_bytes
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise ToolError(too_big(max_bytes))
    decoder = BodyDecoder(response.headers.get("content-encoding", ""), max_bytes)
    loop = asyncio.get_running_loop()
    chunks: list[bytes] = []
    sent = 0
    async for chunk in response.aiter_raw():
        sent += len(chunk)
        if sent > max_bytes:
            raise ToolError(too_big(max_bytes))
        if not decoder.identity:
            chunk = await loop.run_in_executor(limits.executor, decoder.feed, chunk)
        chunks.append(chunk)
    return b"".join(chunks)


_ACCEPT = (
    "text/html,application/xhtml+xml,text/plain,text/markdown,application/json;q=0.9,*/*;q=0.5"
)
