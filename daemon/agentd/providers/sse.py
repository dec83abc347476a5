"""An incremental Server-Sent Events decoder following the WHATWG event-stream rules.

Pure: no I/O, no asyncio. Feed it bytes (or text) as they arrive, in chunks of any size and
split anywhere (inside a UTF-8 sequence, between ``\\r`` and ``\\n``), and it returns the
events completed so far. The rules it follows:

- the stream is UTF-8; one leading byte-order mark is dropped; invalid bytes become U+FFFD;
- lines end in ``\\r\\n``, ``\\n`` or ``\\r``;
- a line starting with ``:`` is a comment; a line without ``:`` is a field with an empty value;
  one space after the colon is stripped;
- ``data`` lines are joined with ``\\n``; ``event`` sets the type (default ``message``);
  ``id`` sets the last event id (kept across events, ignored if it contains NUL); ``retry``
  with only ASCII digits sets the reconnection time; other fields are ignored;
- a blank line dispatches the event, unless no ``data`` line was seen (then it only resets);
- at end of stream an unfinished event is discarded (:meth:`SSEDecoder.close` reports it).

Cost is linear in the input: a partial line is kept as a list of fragments and joined once
when its terminator arrives, so a 1 MB event fed in 1 KB chunks is never re-scanned.
"""

from __future__ import annotations

import codecs
import re

import msgspec

_LINE_END = re.compile(r"\r\n|\r|\n")


class ServerSentEvent(msgspec.Struct, frozen=True):
    """One dispatched event. ``retry`` is set when the event carried a valid ``retry`` field."""

    data: str
    event: str = "message"
    id: str = ""
    retry: int | None = None


class SSEDecoder:
    """Turns a byte stream into :class:`ServerSentEvent` values, incrementally."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._at_start = True
        self._skip_lf = False
        self._partial: list[str] = []
        self._data: list[str] = []
        self._event = ""
        self._last_id = ""
        self._retry: int | None = None
        self.reconnection_ms: int | None = None
        """The last valid ``retry`` value seen on the stream (milliseconds)."""

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Decode ``chunk`` and return the events it completed (possibly none)."""
        return self.feed_text(self._utf8.decode(chunk))

    def feed_text(self, text: str) -> list[ServerSentEvent]:
        """Like :meth:`feed`, for input that is already text."""
        if not text:
            return []
        if self._at_start:
            self._at_start = False
            if text[0] == "\ufeff":
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        events: list[ServerSentEvent] = []
        position = 0
        for match in _LINE_END.finditer(text):
            self._line(self._take_line(text[position : match.start()]), events)
            position = match.end()
        if position < len(text):
            self._partial.append(text[position:])
        elif text.endswith("\r"):
            self._skip_lf = True
        return events

    def close(self) -> bool:
        """End of stream. Returns True if an unfinished line or event was discarded."""
        tail = self._utf8.decode(b"", final=True)
        discarded = bool(tail or self._partial or self._data or self._event)
        self._partial.clear()
        self._reset_event()
        return discarded

    def _take_line(self, fragment: str) -> str:
        if not self._partial:
            return fragment
        self._partial.append(fragment)
        line = "".join(self._partial)
        self._partial.clear()
        return line

    def _line(self, line: str, events: list[ServerSentEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line[0] == ":":
            return
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = self.reconnection_ms = int(value)

    def _dispatch(self, events: list[ServerSentEvent]) -> None:
        if self._data:
            data = "\n".join(self._data)
            event = ServerSentEvent(data, self._event or "message", self._last_id, self._retry)
            events.append(event)
        self._reset_event()

    def _reset_event(self) -> None:
        self._data.clear()
        self._event = ""
        self._retry = None
