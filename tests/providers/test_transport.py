"""The providers' HTTP client (``agentd.providers.transport``) on real sockets.

Plain ``http://`` goes through agentd's own HTTP/1.1 client: replies from the real mock LLM,
every body framing, keep-alive and its limits, failures as ``http_failures``' exceptions, and no
httpx imported. ``https://`` goes through httpx with certificate verification: a local TLS server
with a self-signed certificate is refused unless the client is given a context that trusts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.http import read_request, serve_connection
from agentd.protocol.events import TextDelta
from agentd.providers.http1 import ChunkedDecoder
from agentd.providers.http_failures import (
    ConnectFailed,
    ConnectionBroken,
    RequestRefused,
    TimedOut,
    UnsupportedUrl,
)
from agentd.providers.http_types import Timeouts, read_all
from agentd.providers.transport import ProviderClient, new_http_client
from tests.harness import scaled, wait_until_async
from tests.providers.replay import FAST, collect, provider_for, request, user

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def fetch(
    http: ProviderClient,
    url: str,
    method: str = "GET",
    body: bytes = b"",
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    """The status and whole body of one request."""
    response = await http.open(method, url, headers=headers, body=body)
    return response.status_code, await read_all(response)


class Served:
    """A local TCP server: its base URL, how many connections it accepted and how many it
    has closed (its handler returned or failed)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.connections = 0
        self.finished = 0


@contextlib.asynccontextmanager
async def serving(
    handler: Handler, ssl_context: ssl.SSLContext | None = None
) -> AsyncIterator[Served]:
    """Serve ``handler`` on a free port; a connection is closed when its handler returns."""
    served = Served("")

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.connections += 1
        try:
            await handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, ssl.SSLError, asyncio.CancelledError):
                await writer.wait_closed()
            served.finished += 1

    server = await asyncio.start_server(on_connection, "127.0.0.1", 0, ssl=ssl_context)
    port = server.sockets[0].getsockname()[1]
    served.url = f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}"
    try:
        yield served
    finally:
        server.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), scaled(5))


def answering(*responses: bytes) -> Handler:
    """A handler reading one request per response and writing it as is."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for response in responses:
            if await read_request(reader) is None:
                return
            writer.write(response)
            await writer.drain()

    return handler


def mock_llm(server: MockLLMServer) -> Handler:
    """The real mock LLM's request handling, on whatever connection ``serving`` accepts."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_connection(reader, writer, server.handle)

    return handler


async def test_replies_stream_over_one_kept_alive_connection() -> None:
    """Two provider calls against the mock LLM over plain HTTP: both replies arrive whole, on
    one TCP connection."""
    async with serving(mock_llm(MockLLMServer())) as served, new_http_client() as http:
        provider = provider_for("openai", http, base_url=served.url + "/v1")
        first = await collect(provider, request([user("how are you")]))
        second = await collect(provider, request([user("how are you")]))
    for outcome in (first, second):
        assert outcome.end.message.stop_reason == "stop"
        assert "doing well" in "".join(d.text for d in outcome.deltas if isinstance(d, TextDelta))
    assert served.connections == 1


@pytest.mark.parametrize(
    "response",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world",
        b"HTTP/1.0 200 OK\r\n\r\nhello world",
    ],
    ids=["content-length", "chunked", "interim-100", "until-close"],
)
async def test_body_framings(response: bytes) -> None:
    """Content-Length, chunked (with extensions and trailers), a 100 before the answer, and a
    body ended by closing the connection all read as the same body."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await answering(response)(reader, writer)
        if response.startswith(b"HTTP/1.0"):
            writer.close()

    async with serving(handler) as served, new_http_client() as http:
        reply = await fetch(http, served.url + "/x", "POST", b"{}")
    assert reply == (200, b"hello world")


CHUNKED = b"5;name=value\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\nNEXT"


def test_chunked_decoder_takes_any_split() -> None:
    """The chunked body decodes to the same bytes however it is cut (every split point, and
    byte by byte), and what follows the body is kept apart."""
    splits = [[CHUNKED[:cut], CHUNKED[cut:]] for cut in range(len(CHUNKED) + 1)]
    for pieces in [*splits, [CHUNKED[i : i + 1] for i in range(len(CHUNKED))]]:
        decoder = ChunkedDecoder()
        body = b"".join(decoder.feed(piece) for piece in pieces)
        assert (body, decoder.done, decoder.leftover) == (b"hello 0123456789", True, b"NEXT")


@pytest.mark.parametrize(
    "data", [b"-5\r\n", b"0x5\r\n", b"\r\n", b"5\r\nhelloX\r\n", b"f" * 70_000]
)
def test_chunked_decoder_refuses_bad_framing(data: bytes) -> None:
    """Signed, prefixed or empty sizes, data longer than its size, endless size lines."""
    with pytest.raises(ConnectionBroken):
        ChunkedDecoder().feed(data)


async def test_a_closing_server_is_not_reused() -> None:
    """A response saying ``Connection: close``, then a server that closed: the next request
    opens a new connection and succeeds."""
    closing = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
    async with serving(answering(closing)) as served, new_http_client() as http:
        assert await fetch(http, served.url) == (200, b"ok")
        assert await fetch(http, served.url) == (200, b"ok")
    assert served.connections == 2


async def test_idle_connection_dropped_by_the_server_is_not_reused() -> None:
    """The server closes a kept-alive connection after answering: the client notices and
    connects again instead of writing into the dead one."""
    kept = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    async with serving(answering(kept)) as served, new_http_client() as http:
        assert await fetch(http, served.url) == (200, b"ok")
        await wait_until_async(lambda: served.finished == 1, 10, "the server to close")
        assert await fetch(http, served.url) == (200, b"ok")
    assert served.connections == 2


async def test_an_idle_connection_is_closed_after_its_expiry() -> None:
    """A kept-alive connection left idle past ``keepalive_expiry`` is closed by the client
    (the server sees it go), not kept open until the next request."""
    kept = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"
    client = ProviderClient(keepalive_expiry=0.2)
    async with serving(answering(kept + b"ok", kept + b"ok")) as served, client as http:
        assert await fetch(http, served.url) == (200, b"ok")
        await wait_until_async(lambda: served.finished == 1, 10, "the idle connection to close")
    assert served.connections == 1


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (b"", "without sending a response"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\ncut short", "mid-body"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", "mid-body"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
        (b"SMTP ready\r\n\r\n", "malformed status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", "too long"),
    ],
    ids=["no-response", "short", "short-chunk", "chunk-size", "status", "header", "length", "big"],
)
async def test_broken_responses_are_protocol_errors(response: bytes, message: str) -> None:
    """Truncated or malformed responses raise ConnectionBroken (a retryable failure for the
    providers), and the connection is not reused."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await answering(response)(reader, writer)
        writer.close()

    async with serving(handler) as served, new_http_client() as http:
        with pytest.raises(ConnectionBroken, match=message):
            await fetch(http, served.url, "POST", b"{}")


async def test_a_silent_server_times_out() -> None:
    """No answer within the read timeout: TimedOut."""

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    async with serving(silent) as served, new_http_client(Timeouts(read=0.2)) as http:
        with pytest.raises(TimedOut):
            await fetch(http, served.url)


async def test_connection_refused_is_a_connect_error() -> None:
    """Nothing listening: ConnectFailed, which the providers retry and then report."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with new_http_client() as http:
        with pytest.raises(ConnectFailed):
            await fetch(http, f"http://127.0.0.1:{port}/")
        outcome = await collect(provider_for("openai", http, base_url=f"http://127.0.0.1:{port}"))
    assert "cannot connect to" in (outcome.end.message.error_message or "")


async def test_abandoning_a_stream_closes_its_connection() -> None:
    """Closing a response mid-body closes the connection (the server sees EOF); the next
    request gets a fresh connection."""
    async with MockLLMServer() as llm, serving(mock_llm(llm)) as served:
        async with new_http_client() as http:
            provider = provider_for("openai", http, base_url=served.url + "/v1")
            stream = provider.stream(request([user("please be slow")]))
            async with contextlib.aclosing(stream):  # type: ignore[type-var]
                async for item in stream:
                    if isinstance(item, TextDelta):
                        break
            await wait_until_async(lambda: llm.active_streams == 0, 10, "the stream to stop")
            outcome = await collect(provider, request([user("how are you")]))
        assert outcome.end.message.stop_reason == "stop"
        assert served.connections == 2


async def test_header_with_a_line_break_is_refused() -> None:
    """A header value carrying CR/LF (say, a key pasted with a newline) is never written."""
    empty = answering(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    async with serving(empty) as served, new_http_client() as http:
        with pytest.raises(RequestRefused):
            await fetch(http, served.url, headers={"authorization": "Bearer a\r\nX-Evil: 1"})
        outcome = await collect(
            provider_for("openai", http, base_url=served.url, api_key="sk-a\nb", retry=FAST)
        )
    assert served.connections == 0
    assert "cannot be sent" in (outcome.end.message.error_message or "")


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1/", "http://", "http://127.0.0.1:99999/", "127.0.0.1:80"]
)
async def test_unsupported_or_malformed_urls_are_refused(url: str) -> None:
    """Only http and https URLs with a host and a valid port are sent."""
    async with new_http_client() as http:
        with pytest.raises(UnsupportedUrl):
            await fetch(http, url)


async def test_requests_carry_host_length_and_the_callers_headers() -> None:
    """What the plain client sends: the request line with the path and query, ``Host`` with
    the port, ``Content-Length`` for a body, and the caller's headers over the defaults."""
    got = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await read_request(reader)
        got.append(request)
        writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        await writer.drain()

    async with serving(handler) as served, new_http_client() as http:
        headers = {"Accept": "text/event-stream", "X-Api-Key": "k"}
        status, body = await fetch(http, served.url + "/v1/x?a=1", "POST", b"{}", headers)
    assert (status, body) == (204, b"")
    request = got[0]
    assert request is not None
    assert (request.method, request.path, request.body) == ("POST", "/v1/x?a=1", b"{}")
    port = served.url.rsplit(":", 1)[1]
    assert request.headers["host"] == f"127.0.0.1:{port}"
    assert request.headers["content-length"] == "2"
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["x-api-key"] == "k"
    assert request.headers["user-agent"].startswith("agentd/")


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by itself, and its key (``openssl`` is in
    ``.ci/system-packages``)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (.ci/system-packages installs it)")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *(
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
            ),
            *("-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext"),
            *("subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=scaled(60),
    )
    return cert, key


async def test_https_verifies_certificates(self_signed: tuple[Path, Path]) -> None:
    """An https base URL goes through a verifying TLS transport: a self-signed server is
    refused by default (the provider reports the failure) and accepted only by a client told to
    trust that certificate."""
    cert, key = self_signed
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    async with serving(mock_llm(MockLLMServer()), server_context) as served:
        async with new_http_client() as http:
            with pytest.raises(ConnectFailed, match="CERTIFICATE_VERIFY_FAILED"):
                await fetch(http, served.url + "/v1/models")
            provider = provider_for("openai", http, base_url=served.url + "/v1")
            refused = await collect(provider)
        trusting = ssl.create_default_context(cafile=str(cert))
        async with new_http_client(verify=trusting) as http:
            provider = provider_for("openai", http, base_url=served.url + "/v1")
            accepted = await collect(provider, request([user("how are you")]))
    assert "CERTIFICATE_VERIFY_FAILED" in (refused.end.message.error_message or "")
    assert accepted.end.message.stop_reason == "stop"


def test_plain_http_loads_neither_httpx_nor_tls_modules() -> None:
    """A provider's reply over plain HTTP, in a fresh interpreter, leaves httpx (and with it
    email, http.client, urllib.request), httpcore, h11, anyio, sniffio and certifi unimported."""
    code = """
import asyncio, json, sys
from agentd.config.load import ModelChoice
from agentd.mockllm import MockLLMServer
from agentd.protocol.content import TextContent, UserMessage
from agentd.providers import make_provider
from agentd.providers.base import ProviderRequest, StreamEnd
from agentd.providers.transport import new_http_client

async def main():
    async with MockLLMServer() as server, new_http_client() as http:
        choice = ModelChoice("openai", "openai", "m", server.url, "sk-test", None, None)
        hello = UserMessage(id="u1", content=[TextContent(text="how are you")], timestamp=0.0)
        request = ProviderRequest(model="m", system_prompt="", messages=[hello], tools=[],
                                  message_id="msg-1")
        items = [item async for item in make_provider(choice, http).stream(request)]
        assert isinstance(items[-1], StreamEnd) and items[-1].message.stop_reason == "stop"
asyncio.run(main())
heavy = ("httpx", "email", "http.client", "urllib.request", "httpcore", "h11", "anyio",
         "sniffio", "certifi")
print(json.dumps([m for m in heavy if m in sys.modules]))
"""
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=True,
    )
    assert json.loads(result.stdout) == []


async def test_a_cookie_the_server_sets_is_sent_back() -> None:
    """A cookie a server sets (a load balancer's, say) is sent back to the same host with
    the next requests; ``Max-Age=0`` deletes it."""
    seen: list[str | None] = []
    answers = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno",
        b"HTTP/1.1 200 OK\r\nSet-Cookie: lb=node-2; Path=/\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nSet-Cookie: x=1\r\nContent-Length: 2\r\n\r\nno",
        b"HTTP/1.1 200 OK\r\nSet-Cookie: lb=; Max-Age=0\r\nContent-Length: 2\r\n\r\nno",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno",
    ]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for answer in answers:
            got = await read_request(reader)
            if got is None:
                return
            seen.append(got.headers.get("cookie"))
            writer.write(answer)
            await writer.drain()

    async with serving(handler) as served, new_http_client() as http:
        for _ in answers:
            assert (await fetch(http, served.url + "/v1/models"))[0] == 200
        assert http.cookies.get("127.0.0.1", "x") == "1"
    assert seen == [None, None, "lb=node-2", "lb=node-2; x=1", "x=1"]
