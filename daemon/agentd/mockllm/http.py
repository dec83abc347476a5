"""A small asyncio HTTP/1.1 server: enough for JSON requests and streamed SSE replies.

Requests need a ``Content-Length`` body (no chunked uploads). Connections are kept alive
unless the client says ``Connection: close`` or speaks HTTP/1.0. Streamed replies use
chunked transfer encoding. Malformed requests get a 400 and the connection is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from http import HTTPStatus

import msgspec

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024


class BadRequest(Exception):
    """The bytes received are not an HTTP/1.1 request this server accepts."""


class Request(msgspec.Struct, frozen=True):
    """A parsed request. Header names are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool


class Responder:
    """Writes one response: either :meth:`send` or :meth:`start_stream` + ``write`` + ``end``."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        """A complete response with a Content-Length."""
        fields = {"content-type": content_type, "content-length": str(len(body)), **(headers or {})}
        self._writer.write(_head(status, fields) + body)
        await self._writer.drain()

    async def start_stream(
        self, status: int = 200, content_type: str = "text/event-stream"
    ) -> None:
        """Send the head of a chunked response."""
        fields = {
            "content-type": content_type,
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
        }
        self._writer.write(_head(status, fields))
        await self._writer.drain()

    async def write(self, data: bytes) -> None:
        """Send one chunk (empty data is skipped: it would end the body)."""
        if data:
            self._writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            await self._writer.drain()

    async def end(self) -> None:
        """End the chunked body."""
        self._writer.write(b"0\r\n\r\n")
        await self._writer.drain()


Handler = Callable[[Request, Responder], Awaitable[None]]


async def serve_connection(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, handler: Handler
) -> None:
    """Answer requests on one connection until it closes or a request asks to close it."""
    try:
        while True:
            try:
                request = await read_request(reader)
            except BadRequest as exc:
                body = str(exc).encode()
                await Responder(writer).send(400, body, "text/plain", {"connection": "close"})
                return
            if request is None:
                return
            await handler(request, Responder(writer))
            if not request.keep_alive:
                return
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            await writer.wait_closed()


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request, or None when the client closed the connection between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise BadRequest("incomplete request head") from exc
        return None
    except asyncio.LimitOverrunError as exc:
        raise BadRequest("request head too large") from exc
    method, path, version, headers = _parse_head(head)
    if "chunked" in headers.get("transfer-encoding", ""):
        raise BadRequest("chunked request bodies are not supported; send Content-Length")
    length_text = headers.get("content-length", "0")
    if not length_text.isdigit() or int(length_text) > MAX_BODY_BYTES:
        raise BadRequest(f"bad Content-Length {length_text!r}")
    body = await reader.readexactly(int(length_text))
    connection = headers.get("connection", "").lower()
    keep_alive = version == "HTTP/1.1" and connection != "close"
    return Request(method, path, headers, body, keep_alive)


def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    try:
        lines = head.decode("latin-1").split("\r\n")
        method, path, version = lines[0].split(" ")
    except ValueError as exc:
        raise BadRequest("malformed request line") from exc
    if not version.startswith("HTTP/1."):
        raise BadRequest(f"unsupported protocol {version!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, colon, value = line.partition(":")
            if not colon:
                raise BadRequest(f"malformed header line {line!r}")
            headers[name.strip().lower()] = value.strip()
    return method, path, version, headers


def _head(status: int, fields: dict[str, str]) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Overloaded" if status == 529 else "Error"
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in fields.items()), "", ""]
    return "\r\n".join(lines).encode("latin-1")
