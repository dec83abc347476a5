"""A response body's content codings undone by hand, within a byte budget.

httpx would decode a body whole before its size could be counted: a 2 KiB
``Content-Encoding: gzip, gzip`` body is a gigabyte once decoded. :class:`BodyDecoder` undoes
at most :data:`MAX_CODINGS` codings (``gzip``/``x-gzip``, ``deflate``, ``identity``; anything
else is refused, and the request only offers ``gzip, deflate``), each stage through a zlib
``decompressobj`` whose ``max_length`` is what is left of the budget, so no stage ever holds
more than the budget plus one byte: a body that decodes past it is refused as soon as it
does. ``feed`` is plain CPU work on bounded data, meant to run off the event loop.
"""

from __future__ import annotations

import zlib

from agentd.tools.base import ToolError

MAX_CODINGS = 2
"""Content codings undone at most (``gzip, gzip`` is allowed, a third layer is refused)."""
ACCEPT_ENCODING = "gzip, deflate"
_GZIP_WBITS = zlib.MAX_WBITS | 16


class _Stage:
    """One content coding: ``decode`` returns what ``data`` decodes to, raising ToolError
    when this stage's output would pass ``budget`` bytes in all."""

    def __init__(self, coding: str) -> None:
        self.gzip = coding != "deflate"
        self._wbits = _GZIP_WBITS if self.gzip else zlib.MAX_WBITS
        self._obj = zlib.decompressobj(self._wbits)
        self._started = False
        self._done = False
        self._between = False
        self._head = b""
        self.produced = 0

    def decode(self, data: bytes, budget: int) -> bytes:
        if not self.gzip and not self._started:  # the zlib header decides: wait for 2 bytes
            data = self._head = self._head + data
            if len(data) < 2:
                return b""
        out = bytearray()
        while data and not self._done:
            if self._between and not data.startswith(b"\x1f\x8b"[: len(data)]):
                self._done = True  # after the last gzip member: padding, ignored
                break
            self._between = False
            piece = self._decompress(data, budget - self.produced - len(out) + 1)
            out += piece
            if self.produced + len(out) > budget:
                raise ToolError(too_big(budget, decoded=True))
            if not self._obj.eof:
                break  # every input byte was taken (the output limit was not reached)
            data = self._obj.unused_data
            if not self.gzip:
                self._done = True  # one deflate stream; what follows it is ignored
            else:
                self._obj = zlib.decompressobj(self._wbits)  # a next gzip member, if any
                self._between = True
        self.produced += len(out)
        return bytes(out)

    def _decompress(self, data: bytes, limit: int) -> bytes:
        try:
            piece = self._obj.decompress(data, limit)
        except zlib.error as error:
            if self.gzip or self._started:
                raise ToolError(f"The response's content coding is corrupt: {error}.") from None
            # "deflate" is meant to be zlib-wrapped, but some servers send raw deflate
            self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
            self._started = True
            return self._decompress(data, limit)
        self._started = True
        return piece


class BodyDecoder:
    """The stages of a ``Content-Encoding`` header (applied in the reverse of their listed
    order), each bounded by ``max_bytes``; ToolError for an unknown or excessive coding."""

    def __init__(self, content_encoding: str, max_bytes: int) -> None:
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > MAX_CODINGS:
            raise ToolError(
                f"The response has {len(codings)} content codings ({content_encoding}); "
                f"at most {MAX_CODINGS} are decoded."
            )
        unknown = [c for c in codings if c not in ("gzip", "x-gzip", "deflate")]
        if unknown:
            raise ToolError(f"The response's content coding {unknown[0]!r} is not supported.")
        self.max_bytes = max_bytes
        self._stages = [_Stage(coding) for coding in reversed(codings)]

    @property
    def identity(self) -> bool:
        """True when there is nothing to undo (``feed`` returns its input)."""
        return not self._stages

    def feed(self, data: bytes) -> bytes:
        """The decoded bytes of the next raw ``data``; ToolError past the budget."""
        for stage in self._stages:
            data = stage.decode(data, self.max_bytes)
        return data


def too_big(max_bytes: int, *, decoded: bool = False) -> str:
    """The error for a body past ``max_bytes``."""
    size = f"{max_bytes / 1048576:g} MB"
    if decoded:
        return f"The response is larger than {size} once decoded; it was not read further."
    return f"The response is larger than {size}; it was not read."
