"""Redaction of streamed deltas, so a secret split across two deltas never goes out in pieces.

The event bus redacts each frame, but a delta (assistant text, reasoning, tool-call arguments,
bash output) may end in the middle of a secret. :class:`StreamRedactor` keeps the raw text of
every open stream and releases it only up to a safe point: the last blank, but never into a
secret's lead-in whose value is still to come nor into an unfinished private-key block (at
most 64 KiB is held). It redacts the released prefix with the text before it and sends only
what the client has not seen yet, so the released deltas joined are the redacted whole. A
delta that releases nothing still goes out, with empty text, so the event stream keeps its
rhythm. The rest is flushed, redacted, right before the stream's end (a delta of the
message's next block, ``message_end``, ``tool_execution_end``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import msgspec

from agentd.protocol.events import (
    Event,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolExecutionEnd,
    ToolExecutionUpdate,
)

CONTEXT = 256
_HOLD_LIMIT = 64 << 10
_OVERLAP = 8 << 10
Key = tuple[str, str | int]


class _Stream:
    """The raw text of one stream not yet released, after ``CONTEXT`` released characters
    kept for the patterns that look back (``password: value``)."""

    __slots__ = ("done", "pending", "pending_size", "text")

    def __init__(self) -> None:
        self.text = ""
        self.done = 0  # how much of ``text`` was released
        self.pending: list[str] = []  # deltas since the last one with a blank
        self.pending_size = 0

    def hold(self, text: str) -> None:
        """Keep ``text`` among the pending deltas."""
        self.pending.append(text)
        self.pending_size += len(text)

    def take_pending(self) -> None:
        """The pending deltas join the raw text."""
        self.text += "".join(self.pending)
        self.pending, self.pending_size = [], 0

    def keep_from(self, start: int, done: int) -> None:
        """Drop the raw text before ``start``; ``done`` of what is left was released."""
        self.text, self.done = self.text[start:], done


class StreamRedactor:
    """Rewrites the delta events of one session (see the module docstring)."""

    def __init__(
        self, redact: Callable[[str], str], held_from: Callable[[str], int] | None = None
    ) -> None:
        """``redact`` replaces secrets in text; ``held_from`` says where a secret may begin
        that a text cut after a blank does not finish (``Redactor.held_from``)."""
        self._redact = redact
        self._held_from = held_from or len
        self._streams: dict[Key, _Stream] = {}
        self._deltas: dict[Key, MessageUpdate] = {}

    def events(self, event: Event) -> Iterator[Event]:
        """The events to publish for ``event``: it, rewritten, or nothing (all held back),
        preceded by the flushed tails of the streams it ends."""
        if isinstance(event, MessageStart):
            self._forget("m")
        elif isinstance(event, MessageUpdate):
            yield from self._message_update(event)
            return
        elif isinstance(event, ToolExecutionUpdate):
            text = self._feed(("t", event.tool_call_id), event.output, final=False)
            yield msgspec.structs.replace(event, output=text)
            return
        elif isinstance(event, MessageEnd):
            yield from self._flush_message()
        elif isinstance(event, ToolExecutionEnd):
            key: Key = ("t", event.tool_call_id)
            text = self._feed(key, "", final=True) if key in self._streams else ""
            self._streams.pop(key, None)
            if text:
                yield ToolExecutionUpdate(tool_call_id=event.tool_call_id, output=text)
        yield event

    def _message_update(self, event: MessageUpdate) -> Iterator[Event]:
        delta = event.delta
        if isinstance(delta, TextDelta | ThinkingDelta):
            kind = "text" if isinstance(delta, TextDelta) else "thinking"
            key: Key = ("m", f"{kind}:{delta.index}")
            yield from self._flush_message(but=key)
            text = self._feed(key, delta.text, final=False)
            self._deltas[key] = event
            yield MessageUpdate(delta=msgspec.structs.replace(delta, text=text))
        elif isinstance(delta, ToolCallDelta):
            key = ("m", f"args:{delta.index}")
            yield from self._flush_message(but=key)
            text = self._feed(key, delta.arguments, final=False)
            self._deltas[key] = event
            yield MessageUpdate(delta=msgspec.structs.replace(delta, arguments=text))
        else:
            yield event

    def _flush_message(self, but: Key | None = None) -> Iterator[Event]:
        """Release the held tails of the message's streams (all but ``but``, the block now
        streaming: a provider streams a message's blocks one after another, so a delta of
        another block ends the previous one, and its tail goes out before the new block's)."""
        for key, last in list(self._deltas.items()):
            if key == but:
                continue
            text = self._feed(key, "", final=True)
            del self._deltas[key]
            self._streams.pop(key, None)
            if text:
                delta = last.delta
                field = "arguments" if isinstance(delta, ToolCallDelta) else "text"
                yield MessageUpdate(delta=msgspec.structs.replace(delta, **{field: text}))
        if but is None:
            self._forget("m")

    def _feed(self, key: Key, text: str, *, final: bool) -> str:
        """Add ``text``; return the newly releasable part, redacted (often empty: a delta
        without a blank releases nothing, and its event goes out with empty text)."""
        stream = self._streams.setdefault(key, _Stream())
        stream.hold(text)
        blank = " " in text or "\n" in text or "\t" in text
        if not (final or blank or stream.pending_size > _HOLD_LIMIT):
            return ""
        stream.take_pending()
        cut = len(stream.text) if final else self._safe_point(stream.text, stream.done)
        if cut <= stream.done:
            return ""
        context = stream.text[: stream.done]
        known, whole = self._redact(context), self._redact(stream.text[:cut])
        # ``known`` was released; with the hold rule it is a prefix of ``whole``. Were it not,
        # the new text is released from where they part (repeating a word, never a secret).
        released = whole[_common_prefix(known, whole) :]
        keep_from = max(cut - CONTEXT, 0)
        stream.keep_from(keep_from, cut - keep_from)
        return released

    def _forget(self, kind: str) -> None:
        for table in (self._streams, self._deltas):
            for key in [key for key in table if key[0] == kind]:
                del table[key]

    def _safe_point(self, raw: str, done: int) -> int:
        """How much of ``raw`` can be released: through its last blank, but not into a
        secret's lead-in whose value is still to come (``Authorization: Bearer ``) nor into
        an unfinished private-key block; a run without blanks is released keeping the last
        8 KiB back."""
        cut = max(raw.rfind(" "), raw.rfind("\n"), raw.rfind("\t")) + 1
        cut = min(cut, self._held_from(raw[:cut]))
        return _outside_key_block(raw, done, cut)


def _common_prefix(a: str, b: str) -> int:
    if b.startswith(a):
        return len(a)
    index = 0
    while index < min(len(a), len(b)) and a[index] == b[index]:
        index += 1
    return index


def _outside_key_block(raw: str, done: int, cut: int) -> int:
    begin = raw.rfind("-----BEGIN", 0, cut)
    if begin >= 0 and not _closed(raw, begin, cut) and len(raw) - begin < _HOLD_LIMIT:
        cut = begin
    if cut <= done and len(raw) - done > _HOLD_LIMIT:
        cut = len(raw) - _OVERLAP
    return cut


def _closed(raw: str, begin: int, cut: int) -> bool:
    """Whether the key block opened at ``begin`` ends (``-----END … -----``) before ``cut``."""
    end = raw.find("-----END", begin, cut)
    return end >= 0 and raw.find("-----", end + 8, cut) >= 0
