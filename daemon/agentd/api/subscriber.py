"""Who watches a session: the :class:`Subscriber` contract and an in-process implementation.

A session's events reach its subscribers through the session's event bus (in-process) or
through :class:`agentd.api.RemoteSessions` (from a daemon over JSON-RPC), as the same
:class:`Delivery` items. A subscriber is anything that satisfies :class:`Subscriber`: the
daemon wraps each JSON-RPC connection in one (:class:`agentd.jsonrpc.clients.Client`), and a
front-end (ACP, web, LSP) uses
:class:`QueueSubscriber` or its own class. Subscribers may also answer permission requests.

What a subscriber receives: the events of the sessions it subscribed to **and of their
subagents' sessions** (a ``task`` call's child session is watched by its parent's subscribers,
also by those that subscribe while it runs, down to the deepest child). Each :class:`Delivery`
says whose event it is: ``session_id`` is the session that emitted it, ``parent_session_id``
the session whose ``task`` call started that one (None for a top-level session), so a
subscriber that shows one conversation skips the deliveries of other sessions. Events always
cross as JSON: the bus encodes each one once (redacted like the session file) and every
subscriber, in-process or remote, gets that frame; :meth:`Delivery.event` decodes it. An
in-process reader may take :attr:`Delivery.published` instead, the object itself, when the
redaction left the frame as it was (agentctl's in-process run renders it so, undecoded).

Contracts every subscriber keeps:

* :meth:`Subscriber.deliver` never blocks and never raises; a subscriber that cannot keep up
  drops itself (reports :attr:`~Subscriber.closed`) instead of slowing the run down;
* :meth:`Subscriber.request_permission` is called only when :attr:`answers_permissions` is
  true; it returns the chosen option, or None when this subscriber will not answer (it may
  also wait forever: the approver cancels it when another answer wins, on timeout and on
  cancel of the run).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

import msgspec

from agentd.protocol.events import PermissionOption, SessionEvent
from agentd.protocol.methods import RequestPermissionParams
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult

_keys = itertools.count(1 << 32)  # never collides with connection ids, which count from 1


def new_key() -> int:
    """A :attr:`Subscriber.key` for an in-process subscriber (never a connection id)."""
    return next(_keys)


@functools.cache
def _event_decoder() -> msgspec.json.Decoder[SessionEvent]:
    return msgspec.json.Decoder(SessionEvent)


def decode_event(frame: bytes) -> SessionEvent:
    """A ``session/event``'s params decoded. The decoder is built on first use: building it
    (the whole event union) costs about as much as importing the protocol, which a process
    that never decodes an event (an in-process run: :attr:`Delivery.published`) never pays.
    ``msgspec.ValidationError`` for an event type this side does not know."""
    return _event_decoder().decode(frame)


class Delivery:
    """One numbered event of a session, encoded once for every subscriber.

    ``frame`` is the JSON of the ``session/event`` params (a :class:`SessionEvent`); ``seq`` is
    0 for events sent to one subscriber only (load warnings, history replay);
    ``parent_session_id`` is set for a subagent's event (its parent session's id).
    ``decoded``: the frame already decoded by whoever read it off a connection.
    ``published``: the event object the bus encoded ``frame`` from, when redaction changed
    nothing in it (else None). It is the session's own object, shared by every subscriber of
    this process: a subscriber that reads it (an in-process client rendering the run, which
    then decodes nothing) must not change it; :meth:`event` always gives a private copy.
    """

    __slots__ = ("_decoded", "frame", "parent_session_id", "published", "seq", "session_id")

    def __init__(
        self,
        session_id: str,
        seq: int,
        frame: bytes,
        *,
        parent_session_id: str | None = None,
        decoded: SessionEvent | None = None,
        published: SessionEvent | None = None,
    ) -> None:
        self.session_id = session_id
        self.seq = seq
        self.frame = frame
        self.parent_session_id = parent_session_id
        self._decoded = decoded
        self.published = published

    def event(self) -> SessionEvent:
        """The event, decoded from ``frame``."""
        return self._decoded if self._decoded is not None else decode_event(self.frame)


@runtime_checkable
class FileServer(Protocol):
    """A subscriber that also serves the session's file reads and writes: an editor that
    declared the ``fs`` capability (see :mod:`agentd.session.files`)."""

    def serves_files(self, *, write: bool) -> bool:
        """Whether this subscriber serves reads (``write=False``) or writes now."""
        ...

    async def file_request(
        self, method: str, params: object, result_type: Any, timeout: float | None
    ) -> Any:
        """Send one ``fs/…`` request (``timeout`` None: the caller keeps the time);
        ConnectionLost/PeerTimeout when the peer went away or did not answer, RpcError when
        it refused."""
        ...


class Subscriber(Protocol):
    """Receives the events of the sessions it subscribed to (see the module docstring)."""

    @property
    def key(self) -> int:
        """Unique among the daemon's subscribers; a session holds each key at most once."""
        ...

    @property
    def closed(self) -> bool:
        """True once the subscriber went away; the bus then forgets it."""
        ...

    @property
    def answers_permissions(self) -> bool:
        """Whether :meth:`request_permission` may be called."""
        ...

    def deliver(self, item: Delivery) -> None:
        """Take one event; never blocks."""

    async def request_permission(
        self, params: RequestPermissionParams, timeout: float
    ) -> PermissionOption | None:
        """Ask the user behind this subscriber; the chosen option, or None for no answer."""
        ...


@runtime_checkable
class Paced(Protocol):
    """A subscriber whose deliveries queue for a transport (a JSON-RPC connection).

    A producer of many events for it alone (a ``session/load`` replay) awaits
    :meth:`drained` between chunks, so it never fills the subscriber's queue and other
    clients keep being served; other subscribers are paced by yielding to the loop only."""

    async def drained(self) -> None:
        """Until what was delivered so far has mostly been written out (or the subscriber is
        gone)."""
        ...


@runtime_checkable
class QuestionAnswerer(Protocol):
    """A subscriber that can also show questions to its user (``session/askQuestion``).

    :meth:`ask_question` is called only while :meth:`answers_questions` is true; it returns
    the user's answers (``answers`` None: the user declined), or None when this subscriber
    will not answer (it may also wait forever: the questioner cancels it when another answer
    wins, on timeout and on cancel of the run). A subscriber without these methods is never
    asked; a session with no subscriber that answers tells the asker at once."""

    @property
    def key(self) -> int: ...

    @property
    def closed(self) -> bool: ...

    def answers_questions(self) -> bool:
        """Whether a user is behind this subscriber to answer questions now."""
        ...

    async def ask_question(
        self, params: AskQuestionParams, timeout: float
    ) -> AskQuestionResult | None:
        """Show ``params`` to the user; the answers, or None for no answer from here."""
        ...


QuestionAsker = Callable[[AskQuestionParams], Awaitable[AskQuestionResult | None]]
"""An in-process question client: shown the questions, returns the user's answers."""

PermissionAsker = Callable[[RequestPermissionParams], Awaitable[PermissionOption | None]]
"""An in-process approval client: shown a request, returns the option chosen (None: no answer)."""


class SubscriberOverflow(Exception):
    """Raised by :meth:`QueueSubscriber.events` when events were dropped for slowness."""


class QueueSubscriber:
    """An in-process subscriber: events go to a bounded queue read with :meth:`events`.

    ``ask`` makes it an approval client: it is called for each permission request of the
    sessions it watches (answers may also come through ``SessionService.answer_permission``,
    e.g. from a web page; pass ``answers_permissions=True`` without ``ask`` for that style).
    When the queue holds ``max_events`` unread events the subscriber closes itself (the reader
    gets :class:`SubscriberOverflow` and should resubscribe with ``since_seq``).
    """

    def __init__(
        self,
        *,
        ask: PermissionAsker | None = None,
        answers_permissions: bool | None = None,
        max_events: int = 10_000,
        ask_question: QuestionAsker | None = None,
    ) -> None:
        """``ask_question`` makes it a question client too (without it, it is never asked)."""
        self.key = new_key()
        self.answers_permissions = (
            ask is not None if answers_permissions is None else answers_permissions
        )
        self._ask = ask
        self._ask_question = ask_question
        self._queue: asyncio.Queue[Delivery | None] = asyncio.Queue()
        self._max_events = max_events
        self._closed = False
        self._overflowed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def deliver(self, item: Delivery) -> None:
        if self._closed:
            return
        if self._queue.qsize() >= self._max_events:
            self._overflowed = True
            self.close()
            return
        self._queue.put_nowait(item)

    async def request_permission(
        self, params: RequestPermissionParams, timeout: float
    ) -> PermissionOption | None:
        if self._ask is None:  # answered through SessionService.answer_permission
            await asyncio.Event().wait()
            return None
        return await self._ask(params)

    def answers_questions(self) -> bool:
        return self._ask_question is not None

    async def ask_question(
        self, params: AskQuestionParams, timeout: float
    ) -> AskQuestionResult | None:
        return None if self._ask_question is None else await self._ask_question(params)

    def close(self) -> None:
        """Stop receiving; a reader of :meth:`events` finishes after the queued events."""
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(None)

    async def events(self) -> AsyncIterator[SessionEvent]:
        """The events in order, until :meth:`close` (raises SubscriberOverflow if dropped)."""
        while True:
            item = await self._queue.get()
            if item is None:
                if self._overflowed:
                    raise SubscriberOverflow("events were dropped: the reader fell behind")
                return
            yield item.event()

    def get_nowait(self) -> SessionEvent | None:
        """The next queued event, or None when none is queued."""
        try:
            item = self._queue.get_nowait()
        except asyncio.QueueEmpty:
            return None
        if item is None:
            self._queue.put_nowait(None)  # keep the end marker for events()
            return None
        return item.event()
