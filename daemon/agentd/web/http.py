"""A small HTTP/1.1 server core on asyncio streams: requests in, responses out.

Only what a browser and curl need from a loopback server: the request line and headers (at
most :data:`MAX_HEAD` bytes), bodies framed by ``Content-Length`` (read only once the caller has
checked the head: at most :data:`MAX_BODY`; chunked request bodies are refused with 411),
keep-alive, and responses that either carry a
``Content-Length`` or stream until the connection closes (Server-Sent Events). Malformed input
is answered with a 4xx and the connection closed; nothing here raises to the caller except
:class:`HttpError` from :func:`read_head` and :func:`read_body`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

import msgspec

MAX_HEAD = 16 * 1024
MAX_BODY = 32 * 1024 * 1024  # prompts may carry base64 images
MAX_PREAUTH_BODY = 4 * 1024
"""The largest body of a request that carries no credential (the sign-in)."""
MAX_HEADERS = 100

REASONS = {
    200: "OK",
    204: "No Content",
    303: "See Other",
    304: "Not Modified",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    411: "Length Required",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class HttpError(Exception):
    """A request that cannot be served: answer ``status`` with ``message`` and close."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Request:
    """One parsed request. Header names are lower-case; a repeated header keeps its last value
    (``Host``, ``Origin`` and ``Content-Length`` may not repeat)."""

    method: str
    target: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = b""
    version: str = "HTTP/1.1"
    cookies: dict[str, str] = field(default_factory=dict)

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return connection == "keep-alive"
        return connection != "close"


async def read_head(reader: asyncio.StreamReader) -> Request | None:
    """The next request's line and headers (no body yet); None when the peer closed between
    requests. The caller checks who is asking before it reads the body (:func:`read_body`)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise HttpError(400, "incomplete request head") from None
    except asyncio.LimitOverrunError:
        raise HttpError(431, "request head too large") from None
    request = parse_head(head)
    if "transfer-encoding" in request.headers:
        raise HttpError(411, "chunked request bodies are not supported; send Content-Length")
    body_length(request)  # a bad Content-Length is refused before anything else
    return request


def body_length(request: Request) -> int:
    """The request's ``Content-Length`` (0 without one); 400 unless it is ASCII digits."""
    text = request.headers.get("content-length", "0")
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise HttpError(400, "bad Content-Length")
    return int(text)


async def read_body(reader: asyncio.StreamReader, request: Request, limit: int) -> None:
    """Read the body into ``request.body``; 413 (before reading any of it) over ``limit``."""
    length = body_length(request)
    if length > limit:
        raise HttpError(413, f"request body over {limit} bytes")
    if length:
        try:
            request.body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            raise HttpError(400, "request body shorter than Content-Length") from None


def parse_head(head: bytes) -> Request:
    """Parse the request line and headers (``head`` ends with the blank line)."""
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
        raise HttpError(400, "undecodable request head") from None
    lines = text[:-4].split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or parts[2] not in ("HTTP/1.1", "HTTP/1.0"):
        raise HttpError(400, "bad request line")
    method, target, version = parts
    if not target.startswith("/"):
        raise HttpError(400, "request target must be a path")
    if len(lines) - 1 > MAX_HEADERS:
        raise HttpError(431, "too many headers")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise HttpError(400, "bad header line")
        key = name.lower()
        if key in headers and key in ("host", "content-length", "origin"):
            raise HttpError(400, f"repeated {name} header")
        headers[key] = value.strip()
    url = urlsplit(target)
    return Request(
        method=method,
        target=target,
        path=url.path,
        query=dict(parse_qsl(url.query)),
        headers=headers,
        version=version,
        cookies=parse_cookies(headers.get("cookie", "")),
    )


def parse_cookies(text: str) -> dict[str, str]:
    """``name=value`` pairs of a Cookie header (later duplicates win)."""
    cookies: dict[str, str] = {}
    for part in text.split(";"):
        name, eq, value = part.strip().partition("=")
        if eq and name:
            cookies[name] = value
    return cookies


def response_head(status: int, headers: list[tuple[str, str]]) -> bytes:
    """The status line and headers of a response, ending with the blank line."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}"]
    lines.extend(f"{name}: {value}" for name, value in headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def response(status: int, headers: list[tuple[str, str]], body: bytes = b"") -> bytes:
    """A complete response with ``Content-Length``."""
    return response_head(status, [*headers, ("Content-Length", str(len(body)))]) + body


COMMON = [("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer")]
JSON = [("Content-Type", "application/json"), ("Cache-Control", "no-store"), *COMMON]
TEXT = [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store"), *COMMON]


def error_response(
    status: int, message: str, *, json: bool, allow: str | None = None, close: bool = False
) -> bytes:
    """An error answer: ``{"error": {"code", "message"}}`` (``json``) or a line of text;
    ``close`` says the connection closes after it."""
    headers = list(JSON if json else TEXT)
    if allow is not None:
        headers.append(("Allow", allow))
    if close:
        headers.append(("Connection", "close"))
    if json:
        error = {"error": {"code": -32600, "message": message}}
        body = msgspec.json.encode(error)
    else:
        body = (message + "\n").encode()
    return response(status, headers, body)
