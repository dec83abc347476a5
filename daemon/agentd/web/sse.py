"""A session's events as Server-Sent Events: one :class:`SseStream` per open event stream.

An ``SseStream`` is a session :class:`~agentd.api.subscriber.Subscriber`. The events of one
event-loop step are written as one message: ``data:`` holds the ``session/event`` params as JSON
(the bus's frame, never re-encoded), or a JSON array of them when the step produced several, and
``id:`` is the highest seq among them (no ``id:`` when all are seq 0: load warnings, history
replay), so a reconnect with ``Last-Event-ID`` resumes right after the message. Batching keeps
a fast stream (thousands of deltas per second) to one socket write and one browser event per
step instead of one per delta. A stream whose socket buffer passes
:data:`MAX_BUFFERED` bytes (a client that stopped reading) is closed and forgotten; the
browser reconnects with ``Last-Event-ID`` and gets the missed events from the replay buffer.

The stream answers permission requests in the sense that it keeps a request open for the page
(``answers_permissions``): the page answers through ``SessionService.answer_permission``.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING, Any

from agentd.errors import InvalidParams

if TYPE_CHECKING:
    from agentd.api.subscriber import Delivery
    from agentd.protocol.events import PermissionOption
    from agentd.protocol.methods import RequestPermissionParams

MAX_BUFFERED = 8 * 1024 * 1024
HEARTBEAT = 15.0
"""Seconds between comment lines on an idle stream (finds dead peers, keeps proxies open)."""

HEADERS = [
    ("Content-Type", "text/event-stream; charset=utf-8"),
    ("Cache-Control", "no-store"),
    ("X-Content-Type-Options", "nosniff"),
    ("Connection", "close"),
]

_keys = itertools.count(1 << 40)  # apart from connection ids and in-process subscribers


def since_seq(headers: dict[str, str], query: dict[str, str]) -> int | None:
    """Where a stream resumes: ``Last-Event-ID``, else ``?sinceSeq``, else None (live only);
    InvalidParams unless ASCII digits."""
    text = headers.get("last-event-id") or query.get("sinceSeq")
    if text is None or text == "":
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise InvalidParams("`sinceSeq` (or Last-Event-ID) must be a number")
    return int(text)


def event_bytes(name: str | None, data: bytes, event_id: int | None = None) -> bytes:
    """One SSE message (``data`` must not contain a newline: JSON from msgspec never does)."""
    head = b"" if event_id is None else b"id: %d\n" % event_id
    if name is not None:
        head += b"event: " + name.encode() + b"\n"
    return head + b"data: " + data + b"\n\n"


class SseStream:
    """One browser's event stream of one session (see the module docstring)."""

    answers_permissions = True

    def __init__(self, transport: asyncio.WriteTransport) -> None:
        self.key = next(_keys)
        self.session_id: str | None = None
        self.seen: set[str] = set()
        """Every session this stream delivered events of: its own and its subagents'."""
        """The session this stream watches (set by the server once subscribed)."""
        self._transport = transport
        self._pending: list[bytes] = []  # complete SSE messages
        self._frames: list[bytes] = []  # event frames of the message being gathered
        self._last_seq = 0
        self._scheduled = False
        self._closed = asyncio.Event()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def deliver(self, item: Delivery) -> None:
        """Queue one event; written at the end of this event-loop step. Never blocks."""
        if self._closed.is_set():
            return
        self.seen.add(item.session_id)
        self._schedule()
        self._frames.append(item.frame)
        self._last_seq = max(self._last_seq, item.seq)

    def send(self, name: str, data: bytes) -> None:
        """Queue a named control event (``subscribed``), after the events queued so far."""
        self._schedule()
        self._gather()
        self._pending.append(event_bytes(name, data))

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _gather(self) -> None:
        """Turn the queued event frames into one message."""
        frames = self._frames
        if not frames:
            return
        data = frames[0] if len(frames) == 1 else b"[" + b",".join(frames) + b"]"
        self._pending.append(event_bytes(None, data, self._last_seq or None))
        self._frames = []
        self._last_seq = 0

    def _flush(self) -> None:
        self._scheduled = False
        self._gather()
        if self._closed.is_set() or not self._pending:
            self._pending.clear()
            return
        transport = self._transport
        if transport.is_closing():
            self.close()
            return
        transport.write(b"".join(self._pending))
        self._pending.clear()
        if transport.get_write_buffer_size() > MAX_BUFFERED:
            transport.abort()
            self.close()

    async def request_permission(
        self, params: RequestPermissionParams, timeout: float
    ) -> PermissionOption | None:
        """Keep the request open until it is settled elsewhere (the page answers through the
        API); the approver cancels this wait when an answer wins, on timeout or on cancel."""
        await self._closed.wait()
        return None

    def answers_questions(self) -> bool:
        """A page shows the question card (it answers through ``question/answer``)."""
        return not self._closed.is_set()

    async def ask_question(self, params: Any, timeout: float) -> None:
        """Keep the question open until it is settled elsewhere (the page answers through
        the API); the questioner cancels this wait when an answer wins, on timeout or cancel."""
        await self._closed.wait()

    def close(self) -> None:
        """Stop writing; the bus forgets the stream at its next event."""
        self._closed.set()

    async def hold(self, reader: asyncio.StreamReader) -> None:
        """Keep the stream open until the peer goes away or :meth:`close`; send heartbeats."""
        eof = asyncio.ensure_future(reader.read(1))
        closed = asyncio.ensure_future(self._closed.wait())
        try:
            while not self.closed:
                done, _ = await asyncio.wait({eof, closed}, timeout=HEARTBEAT)
                if eof in done:
                    break
                if not done and not self._transport.is_closing():
                    self._transport.write(b": ping\n\n")
        finally:
            self.close()
            eof.cancel()
            closed.cancel()
