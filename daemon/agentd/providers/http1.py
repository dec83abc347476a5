"""One HTTP/1.1 client connection over asyncio streams: write a request, read a response.

Enough HTTP/1.1 for an LLM server on the local machine or network (Ollama, vLLM, LiteLLM,
llama.cpp, the mock LLM): requests with a ``Content-Length`` or chunked body; responses framed
by ``Transfer-Encoding: chunked``, ``Content-Length`` or the end of the connection; ``1xx``
interim responses skipped; keep-alive unless either side says ``close``. Plain TCP only: TLS goes
through httpx (:mod:`agentd.providers.httpx_client`). Nothing here imports httpx.

Failures are :mod:`agentd.providers.http_failures`' exceptions: ``ConnectFailed`` for the
connection (refused, or no connection within the connect timeout), ``TimedOut`` while sending or
receiving, ``ConnectionBroken`` for a read or write error and for a malformed or truncated
response, ``RequestRefused`` for a request that cannot be written (a header holding CR, LF or
NUL). After any failure the connection is closed, never reused.
"""

from __future__ import annotations

import asyncio
import select
import time
from collections.abc import AsyncGenerator, Coroutine
from typing import Any, NamedTuple

from agentd.providers.http_failures import (
    ConnectFailed,
    ConnectionBroken,
    RequestRefused,
    TimedOut,
)

MAX_HEAD_BYTES = 64 * 1024
"""The largest response head (status line and headers) accepted."""

_READ_SIZE = 64 * 1024
_NO_BODY_STATUSES = frozenset({204, 304})
_FORBIDDEN_IN_HEADERS = (b"\r", b"\n", b"\0")


class ResponseHead:
    """A parsed status line and headers (names as sent; compare them lower-cased)."""

    __slots__ = ("headers", "reason", "status", "version")

    def __init__(
        self, version: bytes, status: int, reason: bytes, headers: list[tuple[bytes, bytes]]
    ) -> None:
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers

    def values(self, name: bytes) -> list[bytes]:
        """The values of header ``name`` (lower-case), in order."""
        return [value for key, value in self.headers if key.lower() == name]


class RequestHead(NamedTuple):
    """A request's head as sent, and whether the connection may be kept after it."""

    data: bytes
    keep_alive: bool


def request_head(method: str, target: str, headers: list[tuple[str, str]]) -> RequestHead:
    """The request line (``target``: the path and query, as sent) and ``headers`` (the caller
    includes ``Host`` and ``Content-Length``). RequestRefused if a header holds CR, LF or NUL."""
    lines = [f"{method} {target} HTTP/1.1".encode("ascii")]
    keep_alive = True
    for name, value in headers:
        raw_name, raw_value = name.encode("latin-1"), value.encode("latin-1", "replace")
        if any(bad in raw_name or bad in raw_value for bad in _FORBIDDEN_IN_HEADERS):
            raise RequestRefused(f"invalid character in header {name!r}")
        if name.lower() == "connection" and value.strip().lower() == "close":
            keep_alive = False
        lines.append(raw_name + b": " + raw_value)
    lines += [b"", b""]
    return RequestHead(b"\r\n".join(lines), keep_alive)


class Http1Connection:
    """An open connection to one origin. Use: :meth:`send`, :meth:`read_head`, then iterate
    :meth:`body` to its end; :attr:`reusable` then says whether it may carry another request."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._keep_alive = True
        self.idle_since = time.monotonic()

    @classmethod
    async def open(cls, host: str, port: int, timeout: float | None) -> Http1Connection:
        """Connect to ``host:port`` (ConnectFailed on failure)."""
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, limit=MAX_HEAD_BYTES)
        except TimeoutError:
            raise ConnectFailed(f"timed out connecting to {host}:{port}") from None
        except OSError as exc:
            raise ConnectFailed(str(exc) or type(exc).__name__) from exc
        return cls(reader, writer)

    @property
    def reusable(self) -> bool:
        """True while the last exchange left the connection clean and the server has not
        closed it since."""
        if not self._keep_alive or self._reader.at_eof() or self._writer.is_closing():
            return False
        sock = self._writer.get_extra_info("socket")
        if sock is None:
            return False
        # An idle connection with something to read has been closed (or spoken on) by the
        # server, even if the event loop has not noticed yet. (poll: any fd number.)
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        return not poller.poll(0)

    def close(self) -> None:
        """Close at once (idempotent; nothing is awaited)."""
        self._keep_alive = False
        self._writer.close()

    async def send(self, head: RequestHead, body: bytes, timeout: float | None) -> None:
        """Write ``head`` (see :func:`request_head`) and ``body``."""
        if not head.keep_alive:
            self._keep_alive = False
        try:
            async with asyncio.timeout(timeout):
                self._writer.write(head.data + body)  # one send for the whole request
                await self._writer.drain()
        except TimeoutError:
            self.close()
            raise TimedOut("timed out sending the request") from None
        except OSError as exc:
            self.close()
            raise ConnectionBroken(str(exc) or type(exc).__name__) from exc

    async def read_head(self, timeout: float | None) -> ResponseHead:
        """The final response's head (interim ``1xx`` responses are skipped)."""
        while True:
            raw = await self._read(self._reader.readuntil(b"\r\n\r\n"), timeout, head=True)
            head = _parse_head(raw)
            if head.status == 101 or not 100 <= head.status < 200:
                break
        if head.version != b"HTTP/1.1" or any(
            value.strip().lower() == b"close" for value in head.values(b"connection")
        ):
            self._keep_alive = False
        return head

    async def body(
        self, head: ResponseHead, method: bytes, timeout: float | None
    ) -> AsyncGenerator[bytes, None]:
        """The body's bytes as they arrive (framing removed; whatever has arrived is yielded
        as one piece). A body cut short raises ConnectionBroken; stopping early leaves the
        connection unusable."""
        keep_alive, self._keep_alive = self._keep_alive, False  # False until the end is read
        framing, length = _framing(head, method)
        if framing == "chunked":
            decoder = ChunkedDecoder()
            while not decoder.done:
                part = decoder.feed(await self._read_some(_READ_SIZE, timeout, closing=False))
                if part:
                    yield part
            keep_alive = keep_alive and not decoder.leftover
        elif framing == "length":
            while length > 0:
                part = await self._read_some(min(length, _READ_SIZE), timeout, closing=False)
                length -= len(part)
                yield part
        elif framing == "close":
            keep_alive = False
            while part := await self._read_some(_READ_SIZE, timeout, closing=True):
                yield part
        self._keep_alive = keep_alive
        self.idle_since = time.monotonic()

    async def _read_some(self, limit: int, timeout: float | None, *, closing: bool) -> bytes:
        """Up to ``limit`` bytes, as soon as any have arrived; b"" at the end of the stream
        only if the body ends with the connection (``closing``), else ConnectionBroken."""
        data = await self._read(self._reader.read(limit), timeout)
        if not data and not closing:
            raise ConnectionBroken("the server closed the connection mid-body")
        return data

    async def _read(
        self, pending: Coroutine[Any, Any, bytes], timeout: float | None, head: bool = False
    ) -> bytes:
        """Await one read of the stream reader, mapping its failures to ours."""
        try:
            async with asyncio.timeout(timeout):
                data: bytes = await pending
                return data
        except TimeoutError:
            raise TimedOut("timed out waiting for the server") from None
        except asyncio.IncompleteReadError as exc:
            if head and not exc.partial:
                message = "the server disconnected without sending a response"
            else:
                message = "the server closed the connection mid-response"
            raise ConnectionBroken(message) from None
        except asyncio.LimitOverrunError:
            raise ConnectionBroken("a response line or head is too long") from None
        except OSError as exc:
            raise ConnectionBroken(str(exc) or type(exc).__name__) from exc


def _framing(head: ResponseHead, method: bytes) -> tuple[str, int]:
    """How the body of a response is delimited: ``none``, ``chunked``, ``length`` (and how
    many bytes) or ``close`` (the end of the connection)."""
    if method == b"HEAD" or head.status in _NO_BODY_STATUSES or head.status < 200:
        return "none", 0
    codings = b",".join(head.values(b"transfer-encoding")).lower()
    if codings:
        chunked = codings.rsplit(b",", 1)[-1].strip() == b"chunked"
        return ("chunked", 0) if chunked else ("close", 0)
    lengths = {value.strip() for value in head.values(b"content-length")}
    if len(lengths) > 1 or not all(value.isdigit() for value in lengths):
        raise ConnectionBroken(f"bad Content-Length {sorted(lengths)!r}")
    return ("length", int(lengths.pop())) if lengths else ("close", 0)


class ChunkedDecoder:
    """Removes the chunked transfer coding from a body fed in pieces split anywhere. Pure.

    :meth:`feed` returns the data bytes completed so far (chunk extensions and trailer fields
    are dropped); :attr:`done` turns True after the last chunk and the trailer, and
    :attr:`leftover` then holds whatever followed the body. Malformed framing raises
    ConnectionBroken.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._state = "size"  # size → data → data_end → size … → trailer → done
        self._remaining = 0
        self.done = False
        self.leftover = b""

    def feed(self, data: bytes) -> bytes:
        """Take ``data``; return the body bytes it completed."""
        if self.done:
            self.leftover += data
            return b""
        buffer = self._buffer
        buffer += data
        out: list[bytes] = []
        position = 0
        while not self.done:
            if self._state == "data":
                taken = min(self._remaining, len(buffer) - position)
                if not taken:
                    break
                out.append(bytes(buffer[position : position + taken]))
                position += taken
                self._remaining -= taken
                if not self._remaining:
                    self._state = "data_end"
                continue
            end = buffer.find(b"\r\n", position)
            if end < 0:
                if len(buffer) - position > MAX_HEAD_BYTES:
                    raise ConnectionBroken("a chunk line is too long")
                break
            self._line(bytes(buffer[position:end]))
            position = end + 2
        del buffer[:position]
        if self.done:
            self.leftover = bytes(buffer)
            buffer.clear()
        return b"".join(out)

    def _line(self, line: bytes) -> None:
        if self._state == "size":
            self._remaining = _chunk_size(line)
            self._state = "data" if self._remaining else "trailer"
        elif self._state == "data_end":
            if line:
                raise ConnectionBroken("a chunk does not end in CRLF")
            self._state = "size"
        elif not line:  # the blank line ending the trailer
            self.done = True


def _chunk_size(line: bytes) -> int:
    text = line.split(b";", 1)[0].strip()
    if not text or len(text) > 16 or text.strip(b"0123456789abcdefABCDEF"):
        raise ConnectionBroken(f"bad chunk size {text[:20]!r}")
    return int(text, 16)


def _parse_head(raw: bytes) -> ResponseHead:
    lines = raw[:-4].split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or len(parts[1]) != 3:
        raise ConnectionBroken(f"malformed status line {lines[0][:80]!r}")
    if not parts[1].isdigit():
        raise ConnectionBroken(f"malformed status line {lines[0][:80]!r}")
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip() or line[:1] in (b" ", b"\t"):
            raise ConnectionBroken(f"malformed header line {line[:80]!r}")
        headers.append((name, value.strip(b" \t")))
    reason = parts[2] if len(parts) == 3 else b""
    return ResponseHead(parts[0], int(parts[1]), reason, headers)
