"""Per-session event numbering, replay buffer and fan-out to subscribers.

Every event of a session gets the next ``seq`` (strictly increasing: from 1 for a new session;
for a loaded one from :func:`resumed_seq`, so it never repeats a seq of an earlier load, in
this daemon or before a restart), is encoded once, kept in a bounded replay buffer and handed
to every :class:`~agentd.api.subscriber.Subscriber`. ``Subscriber.deliver`` never blocks, so
a slow or dead subscriber cannot delay the run or the other subscribers (a subscriber that
cannot keep up closes itself and is forgotten). Then the daemon's observers
(:class:`agentd.telemetry.Telemetry`: its counters, and OpenTelemetry when on) are told the
event with the session's :class:`~agentd.telemetry.scope.RunScope`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from agentd.api.subscriber import Delivery
from agentd.protocol.events import Event, SessionEvent
from agentd.telemetry.scope import RunScope

if TYPE_CHECKING:
    from agentd.api.subscriber import Subscriber
    from agentd.telemetry import Telemetry

_encode = msgspec.json.Encoder().encode

DEFAULT_REPLAY_EVENTS = 4096
DEFAULT_REPLAY_BYTES = 512 << 10


def resumed_seq(created_at: str, now: float | None = None) -> int:
    """The last seq to count on from when a session is loaded: the microseconds since the
    session was created (its header's ``createdAt``).

    Every earlier load of the session numbered its events below this (it would have had to
    emit more than a million events per second of its life to reach it), so a client's
    ``sinceSeq`` from an earlier load is always recognised as stale. Falls back to the
    Unix time in microseconds when ``created_at`` does not parse.
    """
    moment = time.time() if now is None else now
    try:
        born = datetime.fromisoformat(created_at).timestamp()
    except ValueError:
        born = 0.0
    return max(int((moment - born) * 1_000_000), 1)


class EventBus:
    """Numbers, buffers and broadcasts the events of one session; ``redact`` (the session
    file's) replaces secrets in every encoded frame, so live events show what the file keeps.
    Every event is encoded once and reaches every subscriber, in-process ones too, as that
    JSON frame; ``parent_session_id`` (a subagent's session: its parent's id) goes in each."""

    def __init__(
        self,
        session_id: str,
        *,
        parent_session_id: str | None = None,
        seq: int = 0,
        max_events: int = DEFAULT_REPLAY_EVENTS,
        max_bytes: int = DEFAULT_REPLAY_BYTES,
        redact: Callable[[bytes], bytes] | None = None,
        on_change: Callable[[], None] | None = None,
        telemetry: Telemetry | None = None,
        redact_text: Callable[[str], str] | None = None,
    ) -> None:
        """``seq``: the last seq already issued (see :func:`resumed_seq` for a loaded
        session); ``on_change`` is called after a subscriber was added or removed;
        ``telemetry`` holds the observers told each event (``redact_text``: what they redact
        captured text with)."""
        self.session_id = session_id
        self.parent_session_id = parent_session_id
        self.scope = RunScope(session_id, parent_session_id, redact_text)
        """What the observers know of the session (its run's fields set as a run starts)."""
        self._telemetry = telemetry
        self._redact = redact
        self._on_change = on_change
        self.seq = seq
        self.subscribers: dict[int, Subscriber] = {}
        self._buffer: deque[tuple[int, bytes]] = deque()
        self._buffered_bytes = 0
        self._max_events = max_events
        self._max_bytes = max_bytes

    def publish(self, event: Event) -> int:
        """Number, encode, buffer and broadcast ``event``; return its seq."""
        self.seq += 1
        frame, published = self._encoded(self.seq, event)
        self._remember(self.seq, frame)
        if self.subscribers:
            item = self._delivery(self.seq, frame, published)
            dropped = False
            for subscriber in list(self.subscribers.values()):
                if subscriber.closed:
                    dropped = self.subscribers.pop(subscriber.key, None) is not None
                else:
                    subscriber.deliver(item)
            if dropped:
                self._changed()
        if self._telemetry is not None:
            for observer in self._telemetry.observers:
                observer.observe(self.scope, event)
        return self.seq

    def subscribe(self, subscriber: Subscriber, since_seq: int | None = None) -> tuple[int, bool]:
        """Add ``subscriber``; first replay buffered events after ``since_seq`` to it.

        Returns ``(replayed, complete)``: ``complete`` is False when the buffer no longer reaches
        back to ``since_seq + 1``, or ``since_seq`` is past the last seq (it comes from another
        load of the session): the client must resync from ``session/messages``.
        """
        replayed, complete = 0, True
        if since_seq is not None and since_seq > self.seq:
            complete = False  # a seq this load never issued: from another load of the session
        elif since_seq is not None and since_seq < self.seq:
            oldest = self._buffer[0][0] if self._buffer else self.seq + 1
            complete = since_seq + 1 >= oldest
            for seq, frame in self._buffer:
                if seq > since_seq:
                    subscriber.deliver(self._delivery(seq, frame, None))
                    replayed += 1
        self.subscribers[subscriber.key] = subscriber
        self._changed()
        return replayed, complete

    def unsubscribe(self, subscriber: Subscriber) -> bool:
        """Remove ``subscriber``; return whether it was subscribed."""
        removed = self.subscribers.pop(subscriber.key, None) is not None
        if removed:
            self._changed()
        return removed

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    def send_one(self, subscriber: Subscriber, event: Event) -> int:
        """Send ``event`` to ``subscriber`` alone, with ``seq: 0`` (not numbered, not
        buffered); return the size of its frame."""
        frame, published = self._encoded(0, event)
        subscriber.deliver(self._delivery(0, frame, published))
        return len(frame)

    def _encoded(self, seq: int, event: Event) -> tuple[bytes, SessionEvent | None]:
        """The event's frame (redacted), and the object it was encoded from when redaction
        changed nothing (the :attr:`Delivery.published` of in-process subscribers)."""
        parent = self.parent_session_id
        item = SessionEvent(
            session_id=self.session_id, seq=seq, event=event, parent_session_id=parent
        )
        frame = _encode(item)
        if self._redact is None:
            return frame, item
        redacted = self._redact(frame)
        return redacted, item if redacted is frame else None

    def _delivery(self, seq: int, frame: bytes, published: SessionEvent | None) -> Delivery:
        return Delivery(
            self.session_id,
            seq,
            frame,
            parent_session_id=self.parent_session_id,
            published=published,
        )

    def _remember(self, seq: int, frame: bytes) -> None:
        self._buffer.append((seq, frame))
        self._buffered_bytes += len(frame)
        while self._buffer and (
            len(self._buffer) > self._max_events or self._buffered_bytes > self._max_bytes
        ):
            _, old = self._buffer.popleft()
            self._buffered_bytes -= len(old)
