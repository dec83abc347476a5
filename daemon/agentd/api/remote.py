"""``RemoteSessions``: the session API over any JSON-RPC connection to agentd.

Every method of :class:`~agentd.api.contract.SessionApi` is made here from its entry in
:data:`agentd.protocol.table.METHODS` (nothing restates the method list): it sends the params
Struct and decodes the answer into the entry's result type. Errors come back as the
:class:`agentd.errors.RpcError` subclasses the daemon raised.

Events and requests from the daemon reach the same objects an in-process caller passes to
:class:`~agentd.session.service.SessionService`: a call given a ``subscriber`` registers it
for its session, and the connection's ``session/event`` notifications become
:class:`~agentd.api.subscriber.Delivery` items handed to it (``QueueSubscriber.events()``
yields the same ``SessionEvent`` stream as in-process), ``session/requestPermission`` goes to
its :meth:`~agentd.api.subscriber.Subscriber.request_permission` and ``fs/*`` to its
:meth:`~agentd.api.subscriber.FileServer.file_request`. Listeners (:meth:`listen`) see every
event frame the connection receives, for clients that follow all of them.

Use::

    sessions = RemoteSessions(provider_env=provider_variables(os.environ))
    connection = Connection(reader, writer, sessions.routes(Router()), ...)
    sessions.attach(connection)
    await sessions.request("initialize", InitializeParams(...))
    info = await sessions.create(SessionNewParams(cwd="/abs"), watcher)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from agentd.api.subscriber import Delivery, FileServer, QuestionAnswerer, decode_event
from agentd.errors import InvalidRequest, MethodNotFound
from agentd.protocol.events import PermissionOption, SessionEvent
from agentd.protocol.methods import (
    ReadTextFileParams,
    ReadTextFileResult,
    RequestPermissionParams,
    RequestPermissionResult,
    WriteTextFileParams,
    WriteTextFileResult,
)
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult
from agentd.protocol.table import METHODS, MethodSpec

if TYPE_CHECKING:
    from agentd.api.subscriber import Subscriber
    from agentd.rpc import Connection, Router

PermissionHandler = Callable[[RequestPermissionParams], Awaitable[PermissionOption]]
"""Answers the daemon's permission requests for sessions no subscriber here answers."""
QuestionHandler = Callable[[AskQuestionParams], Awaitable[AskQuestionResult]]
"""Answers the daemon's questions for sessions no subscriber here answers."""
EventListener = Callable[[str | None, bytes], None]
"""Receives every ``session/event``: the session id and the params' JSON bytes."""
WATCH_ENDS = frozenset({"session/unsubscribe", "session/close", "session/delete"})
"""Calls after which this side's subscriber of the session is dropped."""
OTHER_SESSION = frozenset({"session/fork"})
"""Subscribing calls whose ``sessionId`` is not the session watched (the fork's source)."""


class _Header(msgspec.Struct, rename="camel"):
    session_id: str | None = None
    seq: int = 0
    parent_session_id: str | None = None


_decode_header = msgspec.json.Decoder(_Header).decode


class RemoteSessions:
    """The session API over a JSON-RPC :class:`~agentd.rpc.Connection` (see the module
    docstring). ``provider_env`` goes with every call whose table entry takes it (left unset
    by the caller); ``permission_handler`` answers requests no subscriber here answers
    (without one they are refused: ``reject_once``)."""

    def __init__(
        self,
        *,
        provider_env: dict[str, str] | None = None,
        permission_handler: PermissionHandler | None = None,
        question_handler: QuestionHandler | None = None,
    ) -> None:
        """``question_handler`` answers ``session/askQuestion`` (declare the ``questions``
        capability only with one, or with subscribers that answer questions)."""
        self.connection: Connection | None = None
        self.provider_env = provider_env
        self.permission_handler = permission_handler
        self.question_handler = question_handler
        self._watchers: dict[str, dict[int, Subscriber]] = {}
        self._unclaimed: list[Subscriber] = []  # subscribing calls whose session id is unknown
        self._parents: dict[str, str] = {}
        """Each subagent session seen, its parent: its events go to the parent's watchers."""
        self._listeners: list[EventListener] = []

    if TYPE_CHECKING:  # the session methods are made from the table (below)

        def __getattr__(self, name: str) -> Any: ...

    def routes(self, router: Router) -> Router:
        """Add the handlers of what the daemon sends to ``router`` (give it to the
        connection), and return it."""
        router.on_notification("session/event", self._on_event, msgspec.Raw)
        router.add("session/requestPermission", self._on_permission, RequestPermissionParams)
        router.add("session/askQuestion", self._on_question, AskQuestionParams)
        router.add("fs/readTextFile", self._on_read, ReadTextFileParams)
        router.add("fs/writeTextFile", self._on_write, WriteTextFileParams)
        return router

    def attach(self, connection: Connection) -> None:
        """Send the calls on ``connection`` (built with :meth:`routes`). When it closes, the
        subscribers registered here that can be closed (``QueueSubscriber``) are, so their
        readers end instead of waiting for events that cannot come."""
        self.connection = connection
        connection.add_close_callback(self._on_close)

    def _on_close(self, connection: Connection) -> None:
        watchers = [w for found in self._watchers.values() for w in found.values()]
        self._watchers.clear()
        for subscriber in [*watchers, *self._unclaimed]:
            close = getattr(subscriber, "close", None)
            if callable(close):
                close()

    def listen(self, listener: EventListener) -> None:
        """Call ``listener(session_id, params_json)`` for every event frame received."""
        self._listeners.append(listener)

    async def request(self, method: str, params: Any, *, timeout: float | None = None) -> Any:
        """Any client method of the table (``initialize``, ``daemon/status``…), its answer
        decoded as the entry's result type."""
        spec = METHODS.get(method)
        if spec is None or spec.direction != "client":
            raise MethodNotFound(f"no client method {method!r}")
        return await self._connection().request(
            method, params, result_type=spec.result, timeout=timeout
        )

    def _connection(self) -> Connection:
        if self.connection is None:
            raise RuntimeError("RemoteSessions used before attach()")
        return self.connection

    async def _call(
        self, method: str, spec: MethodSpec, params: Any, subscriber: Subscriber | None
    ) -> Any:
        env = self.provider_env
        if env is not None and "provider_env" in spec.local_only and params.provider_env is None:
            params = msgspec.structs.replace(params, provider_env=env)
        session_id = None if method in OTHER_SESSION else getattr(params, "session_id", None)
        watching = subscriber is not None and spec.subscribes and method not in WATCH_ENDS
        if watching and subscriber is not None:
            self._watch(session_id, subscriber)
        try:
            result = await self._connection().request(method, params, result_type=spec.result)
        finally:
            if watching and subscriber is not None and session_id is None:
                self._unclaimed.remove(subscriber)
        if watching and subscriber is not None and session_id is None:
            self._watch(_result_session(result), subscriber)
        if method in WATCH_ENDS and session_id is not None:  # its events stop here
            self._drop(session_id, subscriber)
        return result

    def _watch(self, session_id: str | None, subscriber: Subscriber) -> None:
        if session_id is None:
            self._unclaimed.append(subscriber)
        else:
            self._watchers.setdefault(session_id, {})[subscriber.key] = subscriber

    def _drop(self, session_id: str, subscriber: Subscriber | None) -> None:
        watchers = self._watchers.get(session_id, {})
        if subscriber is None:
            watchers.clear()
        else:
            watchers.pop(subscriber.key, None)
        if not watchers:
            self._watchers.pop(session_id, None)

    def _subscribers(self, session_id: str | None) -> list[Subscriber]:
        """The watchers of ``session_id`` and of the sessions above it (a subagent's events
        reach its parent's subscribers), then the unclaimed ones."""
        found: dict[int, Subscriber] = {}
        seen: set[str] = set()
        while session_id is not None and session_id not in seen:
            seen.add(session_id)
            found.update(self._watchers.get(session_id, {}))
            session_id = self._parents.get(session_id)
        return [*found.values(), *self._unclaimed] if self._unclaimed else list(found.values())

    # --- what the daemon sends ---------------------------------------------------------------

    def _on_event(self, conn: Connection, params: msgspec.Raw) -> None:
        """Hand one ``session/event`` to its session's subscribers (decoded once; an event
        type this side does not know is skipped for them) and to every listener (as sent)."""
        data = bytes(params)
        header = _decode_header(data)
        if header.session_id is not None and header.parent_session_id is not None:
            self._parents[header.session_id] = header.parent_session_id
        subscribers = self._subscribers(header.session_id)
        if subscribers and header.session_id is not None:
            try:
                decoded: SessionEvent | None = decode_event(data)
            except msgspec.ValidationError:
                decoded = None
            if decoded is not None:
                parent = header.parent_session_id
                item = Delivery(
                    header.session_id, header.seq, data, parent_session_id=parent, decoded=decoded
                )
                for subscriber in subscribers:
                    if not subscriber.closed:
                        subscriber.deliver(item)
        for listener in list(self._listeners):
            listener(header.session_id, data)

    async def _on_permission(
        self, conn: Connection, params: RequestPermissionParams
    ) -> RequestPermissionResult:
        for subscriber in self._subscribers(params.session_id):
            if subscriber.answers_permissions and not subscriber.closed:
                outcome = await subscriber.request_permission(params, PERMISSION_WAIT)
                return RequestPermissionResult(outcome=outcome or "reject_once")
        if self.permission_handler is not None:
            return RequestPermissionResult(outcome=await self.permission_handler(params))
        return RequestPermissionResult(outcome="reject_once")

    async def _on_question(self, conn: Connection, params: AskQuestionParams) -> AskQuestionResult:
        for subscriber in self._subscribers(params.session_id):
            if isinstance(subscriber, QuestionAnswerer) and subscriber.answers_questions():
                result = await subscriber.ask_question(params, PERMISSION_WAIT)
                if result is not None:
                    return result
        if self.question_handler is not None:
            return await self.question_handler(params)
        raise InvalidRequest(f"nobody here answers questions of session {params.session_id}")

    async def _on_read(self, conn: Connection, params: ReadTextFileParams) -> Any:
        server = self._file_server(params.session_id, write=False)
        return await server.file_request("fs/readTextFile", params, ReadTextFileResult, None)

    async def _on_write(self, conn: Connection, params: WriteTextFileParams) -> Any:
        server = self._file_server(params.session_id, write=True)
        answer = await server.file_request("fs/writeTextFile", params, Any, None)
        return answer if isinstance(answer, WriteTextFileResult) else WriteTextFileResult()

    def _file_server(self, session_id: str, *, write: bool) -> FileServer:
        for subscriber in self._subscribers(session_id):
            if isinstance(subscriber, FileServer) and subscriber.serves_files(write=write):
                return subscriber
        raise InvalidRequest(f"no file access here for session {session_id}")


PERMISSION_WAIT = 24 * 3600.0
"""What a forwarded permission request tells its subscriber it may take: the daemon has its
own timeout (``[permissions] timeout``) and cancels the request when it passes."""


def _result_session(result: Any) -> str | None:
    """The session id a subscribing call's answer names (``SessionInfo``, load result)."""
    session = getattr(result, "session", result)
    return getattr(session, "session_id", None)


def _remote_method(method: str, spec: MethodSpec) -> Callable[..., Awaitable[Any]]:
    """The RemoteSessions method serving ``method``."""
    if not spec.rpc:

        async def refuse(self: RemoteSessions, params: Any, subscriber: Any = None) -> Any:
            raise MethodNotFound(f"{method} is not served over JSON-RPC")

        return refuse

    async def call(self: RemoteSessions, params: Any, subscriber: Any = None) -> Any:
        return await self._call(method, spec, params, subscriber)

    return call


def _fill_methods() -> None:
    for method, spec in METHODS.items():
        if spec.call is not None:
            function = _remote_method(method, spec)
            function.__name__ = spec.call
            function.__qualname__ = f"RemoteSessions.{spec.call}"
            function.__doc__ = f"``{method}``: {spec.doc}"
            setattr(RemoteSessions, spec.call, function)


_fill_methods()
