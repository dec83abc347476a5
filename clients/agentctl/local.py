"""The session service in agentctl's own process: a one-shot run with one interpreter.

``agentctl send`` with no shared daemon to use (or with ``--stdio``) runs its session here,
through :class:`agentd.session.service.SessionService`, the typed session API the in-process
front-ends (``agentd acp``, ``lsp``, ``mcp``) use: params and results are the same Structs,
errors the same :class:`agentd.errors.RpcError` subclasses, and events reach the renderer as
the objects the session published (no JSON-RPC, no pipe, nothing decoded: see
:attr:`agentd.api.subscriber.Delivery.published`). :class:`LocalClient` offers what the
commands use of :class:`agentctl.client.AgentClient` (``sessions``, ``provider_env``,
``stream``, closing), so ``send`` drives either one the same way.

What the process takes on from ``agentd serve --stdio`` (:meth:`LocalClient.open`, through
:func:`agentd.inprocess.host_sessions`): it is made non-dumpable, the daemon's log goes to the
private log file, the processes killed daemons left are swept, and on close the runs are
cancelled, the session files flushed and the processes its tool calls left ended. The session
files are the shared daemon's (the default session folder); the sandbox and the approvals are
the service's own.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec

from agentctl.events import EventStream
from agentd.api.subscriber import Delivery, new_key
from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import RequestPermissionParams
from agentd.protocol.provider_env import provider_variables
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult
from agentd.protocol.table import METHODS

if TYPE_CHECKING:
    from agentd.api import SessionApi

PermissionHandler = Callable[[RequestPermissionParams], Awaitable[PermissionOption]]
QuestionHandler = Callable[[AskQuestionParams], Awaitable[AskQuestionResult]]
T = Any


class _Watcher:
    """The client's one subscriber: every session it opens or prompts is watched by it, as a
    connection is the subscriber of what it calls over JSON-RPC; it answers approvals and
    questions with the client's handlers (none: never asked, so refused as by the daemon)."""

    def __init__(
        self,
        client: LocalClient,
        permission_handler: PermissionHandler | None,
        question_handler: QuestionHandler | None,
    ) -> None:
        self.key = new_key()
        self.closed = False
        self.answers_permissions = permission_handler is not None
        self._client = client
        self._permission_handler = permission_handler
        self._question_handler = question_handler

    def deliver(self, item: Delivery) -> None:
        self._client.deliver(item)

    async def request_permission(
        self, params: RequestPermissionParams, timeout: float
    ) -> PermissionOption | None:
        if self._permission_handler is None:
            return None
        return await self._permission_handler(params)

    def answers_questions(self) -> bool:
        return self._question_handler is not None and not self.closed

    async def ask_question(
        self, params: AskQuestionParams, timeout: float
    ) -> AskQuestionResult | None:
        return None if self._question_handler is None else await self._question_handler(params)


class _Sessions:
    """:class:`~agentd.api.SessionApi` over the service, as a connection's handlers call it:
    the watcher passed to the methods that subscribe, the client's provider variables to those
    that take them (see :data:`agentd.protocol.table.METHODS`)."""

    def __init__(self, service: SessionApi, watcher: _Watcher, client: LocalClient) -> None:
        self._service = service
        self._watcher = watcher
        self._client = client

    def __getattr__(self, name: str) -> Any:
        spec = _CALLS.get(name)
        if spec is None:
            raise AttributeError(name)
        call = getattr(self._service, name)
        watcher = self._watcher if spec.subscribes else None
        takes_env = "provider_env" in spec.local_only

        async def method(params: Any, subscriber: Any = None) -> Any:
            env = self._client.provider_env
            if takes_env and env is not None and params.provider_env is None:
                params = msgspec.structs.replace(params, provider_env=env)
            return await call(params, subscriber if subscriber is not None else watcher)

        return method


_CALLS = {spec.call: spec for spec in METHODS.values() if spec.call and spec.direction == "client"}


class LocalClient:
    """Sessions hosted in this process (see the module docstring); open with :meth:`open`."""

    transport = "in-process"

    def __init__(
        self,
        service: SessionApi,
        close: Callable[[], Awaitable[None]],
        *,
        permission_handler: PermissionHandler | None = None,
        question_handler: QuestionHandler | None = None,
    ) -> None:
        """``close``: what ends the service (and the process's daemon duties)."""
        self._watcher = _Watcher(self, permission_handler, question_handler)
        self.sessions = cast("SessionApi", _Sessions(service, self._watcher, self))
        self.provider_env: dict[str, str] | None = provider_variables(os.environ)
        """Provider variables given to the sessions (as :class:`AgentClient` sends them)."""
        self._streams: list[EventStream[Any]] = []
        self._close_service = close

    @classmethod
    def open(
        cls,
        *,
        log_path: str | None,
        permission_handler: PermissionHandler | None = None,
        question_handler: QuestionHandler | None = None,
    ) -> LocalClient:
        """The process set up as a private daemon, logging to ``log_path`` (the private log;
        None: nowhere), and a client over its new service (:mod:`agentd.inprocess`)."""
        from agentd.inprocess import host_sessions

        hosted = host_sessions(Path(log_path) if log_path is not None else None)
        return cls(
            hosted.service,
            hosted.close,
            permission_handler=permission_handler,
            question_handler=question_handler,
        )

    def deliver(self, item: Delivery) -> None:
        """Hand one event to the open streams: the session's own object when it has one."""
        published = item.published
        for stream in list(self._streams):
            if published is not None:
                stream.feed_object(item.session_id, item.frame, published)
            else:
                stream.feed(item.session_id, item.frame)

    def stream(
        self, session_id: str | None, convert: Callable[[bytes], T | None]
    ) -> EventStream[T]:
        """A stream of the session's events (as :meth:`AgentClient.stream`)."""
        stream: EventStream[T] = EventStream(session_id, convert, self._drop_stream)
        self._streams.append(stream)
        return stream

    def _drop_stream(self, stream: EventStream[Any]) -> None:
        if stream in self._streams:
            self._streams.remove(stream)

    async def close(self) -> None:
        """Cancel what still runs, flush the session files and end the processes the tool
        calls left (:func:`agentd.inprocess.host_sessions`' close); end the streams."""
        self._watcher.closed = True
        try:
            await self._close_service()
        finally:
            for stream in list(self._streams):
                stream.close()

    async def __aenter__(self) -> LocalClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
