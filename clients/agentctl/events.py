"""Async iterators over the ``session/event`` notifications a client receives.

An :class:`EventStream` starts buffering the moment it is created, so create it *before* the
call that produces the events (``session/prompt``, ``session/subscribe``); it ends when it is
closed or the connection goes away. Each stream has its own unbounded queue: a consumer that
lags behind never makes another one miss events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import msgspec

from agentd.api.subscriber import decode_event
from agentd.protocol.events import SessionEvent

if TYPE_CHECKING:
    from agentd.api import SessionApi

T = TypeVar("T")

_END = object()
_decode_any = msgspec.json.Decoder().decode
_SUBAGENT_START = b'"type":"subagent_start"'


def params_bytes(params: Any) -> bytes:
    """The JSON bytes of notification params given as ``msgspec.Raw``, bytes or builtins."""
    if isinstance(params, msgspec.Raw):
        return bytes(params)
    if isinstance(params, bytes | bytearray | memoryview):
        return bytes(params)
    return msgspec.json.encode(params)


def to_event(data: bytes) -> SessionEvent | None:
    """Decode ``session/event`` params; None for an event type this client does not know."""
    try:
        return decode_event(data)
    except msgspec.ValidationError:
        return None


Frame = tuple[bytes, SessionEvent | None]
"""An event as received: its JSON bytes and its decoded form (None for unknown types)."""


def to_frame(data: bytes) -> Frame:
    """Keep the bytes and decode them (for clients that print and render)."""
    return data, to_event(data)


def to_dict(data: bytes) -> dict[str, Any]:
    """Decode ``session/event`` params to plain JSON values (unknown types kept as they are)."""
    value = _decode_any(data)
    return value if isinstance(value, dict) else {"value": value}


_FROM_OBJECT: dict[Callable[[bytes], Any], Callable[[bytes, SessionEvent], Any]] = {
    to_frame: lambda data, event: (data, event),
    to_event: lambda data, event: event,
}
"""For the converters that decode into a ``SessionEvent``: the same value made from an event
object already at hand (:meth:`EventStream.feed_object`), so nothing is decoded."""


class EventStream(Generic[T]):
    """Events of one session (or of every session when ``session_id`` is None).

    Iterate with ``async for``; leave with ``break`` or :meth:`close`. Items the converter
    maps to None (unknown event types in the typed stream) are skipped.
    """

    def __init__(
        self,
        session_id: str | None,
        convert: Callable[[bytes], T | None],
        on_close: Callable[[EventStream[Any]], None] = lambda stream: None,
    ) -> None:
        self.session_id = session_id
        self._convert = convert
        self._on_close = on_close
        self._from_object = _FROM_OBJECT.get(convert)
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._closed = False
        self._followed: set[str | None] = set()
        self.with_subagents = False
        """Also take the events of the sessions its ``subagent_start`` events name (set it
        before the events come: a child's first events follow its start at once)."""

    def feed(self, session_id: str | None, data: bytes) -> None:
        """Queue one notification's params (called by the client; filters by session)."""
        if self._wanted(session_id, data):
            self._queue.put_nowait(data)

    def feed_object(self, session_id: str | None, data: bytes, event: SessionEvent) -> None:
        """Queue one event given both as its JSON and as the object it was encoded from (an
        in-process session's): a typed stream yields ``event`` itself, undecoded."""
        if self._wanted(session_id, data):
            self._queue.put_nowait((data, event))

    def _wanted(self, session_id: str | None, data: bytes) -> bool:
        if self._closed or (
            self.session_id is not None
            and session_id != self.session_id
            and session_id not in self._followed
        ):
            return False
        if self.with_subagents and _SUBAGENT_START in data:
            child = _decode_any(data).get("event", {}).get("childSessionId")
            if isinstance(child, str):
                self._followed.add(child)
        return True

    def _converted(self, item: Any) -> T | None:
        if isinstance(item, tuple):
            data, event = item
            made = self._from_object
            return made(data, event) if made is not None else self._convert(data)
        return self._convert(item)

    def close(self) -> None:
        """Stop receiving; iteration ends once the queued events are consumed."""
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(_END)
            self._on_close(self)

    @property
    def closed(self) -> bool:
        return self._closed

    def ready(self) -> list[T]:
        """Take the events already received, without waiting (for instance the replay a
        ``session/subscribe`` sent before its answer)."""
        items: list[T] = []
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item is _END:
                self._queue.put_nowait(_END)
                break
            converted = self._converted(item)
            if converted is not None:
                items.append(converted)
        return items

    def __aiter__(self) -> EventStream[T]:
        return self

    async def __anext__(self) -> T:
        while True:
            item = await self._queue.get()
            if item is _END:
                self._queue.put_nowait(_END)
                raise StopAsyncIteration
            converted = self._converted(item)
            if converted is not None:
                return converted

    async def __aenter__(self) -> EventStream[T]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()


class SessionClient(Protocol):
    """What running a prompt needs of a client: the daemon's (:class:`agentctl.client.
    AgentClient`) or this process's own sessions (:class:`agentctl.local.LocalClient`)."""

    @property
    def sessions(self) -> SessionApi: ...

    def stream(
        self, session_id: str | None, convert: Callable[[bytes], T | None]
    ) -> EventStream[T]: ...
