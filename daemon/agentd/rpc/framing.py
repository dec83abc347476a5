"""Framing: cut a byte stream into JSON-RPC message bodies, and frame outgoing bodies.

Two framings, chosen per connection from its first bytes (or fixed by the caller):

``content-length``
    The LSP base protocol: header lines, a blank line, then exactly ``Content-Length`` bytes
    of UTF-8 JSON. Header names are case-insensitive, spaces around values are optional, other
    headers (``Content-Type``) are ignored, and ``\\n`` is accepted in place of ``\\r\\n``.
``ndjson``
    One JSON value per line. Lines are split on LF only (never on U+2028/U+2029 or other
    Unicode separators); a trailing CR is dropped and blank lines are skipped.

Detection: a stream whose first non-blank byte is ``{`` or ``[`` is ndjson; one whose first
line looks like an HTTP-style header (``Name: value``) is content-length; anything else is
treated as ndjson, so garbage earns a parse error per line.

Frames larger than the limit are reported as :class:`FrameError` and skipped: ndjson resumes at
the next LF, content-length discards the announced body without buffering it. Only a header
section that never ends (over 64 KiB) cannot be resynchronised; that error is ``fatal`` and the
caller closes the connection. Pure and synchronous: no I/O here.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

Framing = Literal["ndjson", "content-length"]
NDJSON: Framing = "ndjson"
CONTENT_LENGTH: Framing = "content-length"
FRAMINGS: tuple[Framing, ...] = (CONTENT_LENGTH, NDJSON)

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Largest accepted message body (64 MiB)."""
MAX_HEADER_BYTES = 64 * 1024
"""Largest accepted header section of one content-length frame."""

_HEADER_LINE = re.compile(rb"[A-Za-z0-9!#$%&'*+.^_`|~-]+[ \t]*:")
_BLANK = b" \t\r\n"


class FrameError(msgspec.Struct, frozen=True):
    """A framing problem: answered with a parse or invalid-request error (``id: null``).

    ``fatal`` means the stream cannot be resynchronised and the connection must close.
    """

    message: str
    fatal: bool = False
    too_large: bool = False


def encode_frame(body: bytes, framing: Framing) -> bytes:
    """``body`` framed for the wire (a msgspec JSON body never contains a raw LF)."""
    if framing == NDJSON:
        return body + b"\n"
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


def detect(data: bytes | bytearray) -> Framing | None:
    """The framing a stream starting with ``data`` uses, or None until more bytes arrive."""
    start = len(data) - len(data.lstrip(_BLANK))
    if start == len(data):
        return None
    if data[start] in b"{[":
        return NDJSON
    end = data.find(b"\n", start)
    if end < 0:
        return None if len(data) - start < MAX_HEADER_BYTES else NDJSON
    return CONTENT_LENGTH if _HEADER_LINE.match(data, start) else NDJSON


class FrameDecoder:
    """Incremental frame splitter: :meth:`feed` bytes, get bodies and :class:`FrameError` s."""

    def __init__(self, framing: Framing | None = None, max_frame: int = MAX_FRAME_BYTES) -> None:
        self.framing: Framing | None = framing
        self.max_frame = max_frame
        self.dead = False
        self._buf = bytearray()
        self._discard_line = False
        self._skip = 0
        self._headers: list[bytes] = []
        self._header_bytes = 0
        self._body_len: int | None = None

    def feed(self, data: bytes) -> list[bytes | FrameError]:
        """Consume ``data``; return the complete frames and errors found, in stream order."""
        if self.dead:
            return []
        self._buf += data
        if self.framing is None:
            self.framing = detect(self._buf)
            if self.framing is None:
                return []
        out: list[bytes | FrameError] = []
        if self.framing == NDJSON:
            self._split_lines(out)
        else:
            self._split_content_length(out)
        return out

    # --- ndjson --------------------------------------------------------------------------

    def _split_lines(self, out: list[bytes | FrameError]) -> None:
        buf, pos = self._buf, 0
        while (end := buf.find(b"\n", pos)) >= 0:
            line, pos = buf[pos:end], end + 1
            if self._discard_line:
                self._discard_line = False
                continue
            if line.endswith(b"\r"):
                del line[-1:]
            if len(line) > self.max_frame:
                out.append(self._too_large(len(line)))
            elif line and not line.isspace():
                out.append(bytes(line))
        del buf[:pos]
        if self._discard_line:
            buf.clear()
        elif len(buf) > self.max_frame:
            out.append(self._too_large(len(buf)))
            self._discard_line = True
            buf.clear()

    def _too_large(self, size: int) -> FrameError:
        return FrameError(
            f"frame of {size} bytes or more exceeds the limit of {self.max_frame} bytes",
            too_large=True,
        )

    # --- content-length ------------------------------------------------------------------

    def _split_content_length(self, out: list[bytes | FrameError]) -> None:
        buf, pos = self._buf, 0
        while not self.dead:
            if self._skip:
                taken = min(self._skip, len(buf) - pos)
                self._skip -= taken
                pos += taken
                if self._skip:
                    break
            elif self._body_len is not None:
                if len(buf) - pos < self._body_len:
                    break
                out.append(bytes(buf[pos : pos + self._body_len]))
                pos += self._body_len
                self._body_len = None
            else:
                end = buf.find(b"\n", pos)
                if end < 0:
                    self._check_header_size(len(buf) - pos, out)
                    break
                line, pos = bytes(buf[pos:end]).rstrip(b"\r"), end + 1
                self._header_line(line, out)
        del buf[:pos]

    def _check_header_size(self, pending: int, out: list[bytes | FrameError]) -> None:
        if self._header_bytes + pending > MAX_HEADER_BYTES:
            self.dead = True
            out.append(FrameError("header section exceeds 64 KiB; closing", fatal=True))

    def _header_line(self, line: bytes, out: list[bytes | FrameError]) -> None:
        if line.strip():
            self._headers.append(line)
            self._header_bytes += len(line) + 2
            self._check_header_size(0, out)
            return
        if not self._headers:
            return  # blank lines between frames are tolerated
        length, error = self._content_length(self._headers)
        self._headers, self._header_bytes = [], 0
        if error is not None:
            out.append(FrameError(error))
        elif length > self.max_frame:
            out.append(self._too_large(length))
            self._skip = length
        else:
            self._body_len = length

    @staticmethod
    def _content_length(headers: list[bytes]) -> tuple[int, str | None]:
        for header in headers:
            name, colon, value = header.partition(b":")
            if not colon:
                return 0, f"malformed header line {header[:80]!r}"
            if name.strip().lower() == b"content-length":
                text = value.strip()
                if not text.isdigit():
                    return 0, f"invalid Content-Length {text[:40]!r}"
                return int(text), None
        return 0, "header section without Content-Length"
