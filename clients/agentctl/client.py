"""The async Python client library of agentd.

Open a client with :func:`connect` (the shared daemon's Unix socket, optionally starting it),
:func:`connect_tcp` (host, port and token) or :func:`spawn_stdio` (a private
``agentd serve --stdio`` child). Each returns an initialized :class:`AgentClient`; use it as an
async context manager so the connection (and a private daemon) is closed at the end::

    async with await connect(autostart=True) as client:
        info = await client.sessions.create(SessionNewParams(cwd="/abs/dir", provider="mock"))
        async with client.events(info.session_id) as events:
            prompt = PromptParams(session_id=info.session_id, text="how are you")
            run = asyncio.create_task(client.sessions.prompt(prompt))
            async for item in events:
                print(item.event)
                if isinstance(item.event, AgentEnd):
                    break
        print((await run).stop_reason)

``client.sessions`` is :class:`agentd.api.RemoteSessions`: every session method of the daemon
(:class:`agentd.api.SessionApi`, made from the method table), params and results the Structs of
``agentd.protocol.methods``. Failed calls raise :class:`agentd.errors.RpcError` subclasses
(``.code``, ``.message``); a connection that cannot be opened raises
:class:`DaemonUnavailable`. Imports the standard library, msgspec and
``agentd.protocol``/``agentd.rpc``/``agentd.api`` only (no httpx, no pygls).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from agentctl import launch, prestart
from agentctl.events import EventStream, to_dict, to_event
from agentd import __version__
from agentd.api import RemoteSessions, SessionApi
from agentd.errors import ConnectionLost
from agentd.protocol.base import Empty
from agentd.protocol.content import Message
from agentd.protocol.events import PermissionOption, SessionEvent
from agentd.protocol.methods import (
    PROTOCOL_VERSION,
    ClientCapabilities,
    ClientInfo,
    DaemonStatusResult,
    InitializeParams,
    InitializeResult,
    MessagesParams,
    RequestPermissionParams,
)
from agentd.protocol.provider_env import provider_variables
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult

STREAM_LIMIT = 16 * 1024 * 1024
"""Longest frame accepted from the daemon (asyncio's default of 64 KiB is far too small)."""

PermissionHandler = Callable[[RequestPermissionParams], Awaitable[PermissionOption]]
"""Answers a ``session/requestPermission`` request with one of the offered options."""

QuestionHandler = Callable[[AskQuestionParams], Awaitable[AskQuestionResult]]
"""Answers a ``session/askQuestion`` request: the user's answers (``answers`` None: declined)."""

NotificationHandler = Callable[[str, bytes], None]
"""Receives a notification's method and its params as JSON bytes."""
T = TypeVar("T")


class DaemonProcess(Protocol):
    """A private daemon process: :class:`asyncio.subprocess.Process` or an adopted early one."""

    stdin: asyncio.StreamWriter | None
    stdout: asyncio.StreamReader | None

    async def wait(self) -> int: ...

    def terminate(self) -> None: ...


class DaemonUnavailable(Exception):
    """The daemon could not be reached or started; the message says why and what to do."""


class AgentClient:
    """One JSON-RPC connection to agentd; :attr:`sessions` is its session API.

    Build it with :func:`connect`, :func:`connect_tcp` or :func:`spawn_stdio`, not directly.
    ``permission_handler`` answers server→client permission requests; without one they are
    refused (and, unless one was given at connect time, the daemon never asks).
    ``question_handler`` answers ``session/askQuestion``: only a client given one declares
    the ``questions`` capability (without it the daemon's questions are answered at once
    with "no user can answer").
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        transport: str,
        process: DaemonProcess | None = None,
        permission_handler: PermissionHandler | None = None,
        question_handler: QuestionHandler | None = None,
    ) -> None:
        from agentd.rpc import Connection, Router

        self.remote = RemoteSessions(
            permission_handler=permission_handler, question_handler=question_handler
        )
        self.connection = Connection(
            reader,
            writer,
            self.remote.routes(Router()),
            name="agentctl",
            transport=transport,
            framing="ndjson",
        )
        self.remote.attach(self.connection)
        self.remote.listen(self._on_event)
        self.sessions: SessionApi = self.remote
        self.transport = transport
        self.process = process
        self.server: InitializeResult | None = None
        self._streams: list[EventStream[Any]] = []
        self._listeners: list[NotificationHandler] = []
        self._serve_task: asyncio.Task[None] | None = None

    # --- lifecycle -------------------------------------------------------------------------

    async def initialize(self, *, name: str = "agentctl", token: str | None = None) -> None:
        """Start reading and send ``initialize`` (done by the connect functions)."""
        self._serve_task = asyncio.create_task(self._serve(), name="agentctl-serve")
        params = InitializeParams(
            protocol_version=PROTOCOL_VERSION,
            client_info=ClientInfo(name=name, version=__version__),
            capabilities=ClientCapabilities(
                permissions=self.remote.permission_handler is not None,
                questions=self.remote.question_handler is not None,
            ),
            token=token,
        )
        self.server = await self.call("initialize", params, result_type=InitializeResult)

    @property
    def provider_env(self) -> dict[str, str] | None:
        """Provider variables sent with ``session/new``, ``session/load``, ``session/setModel``
        and ``models/list`` (the table's ``local_only`` field), so sessions use the caller's
        current API keys; None sends none (:func:`connect` sets this process's)."""
        return self.remote.provider_env

    @provider_env.setter
    def provider_env(self, value: dict[str, str] | None) -> None:
        self.remote.provider_env = value

    async def status(self) -> DaemonStatusResult:
        """``daemon/status``: version, pid, uptime, connections, loaded sessions."""
        result: DaemonStatusResult = await self.remote.request("daemon/status", Empty())
        return result

    async def messages(self, session_id: str) -> list[Message]:
        """The whole conversation on the session's current branch, asked for page by page
        (``session/messages`` answers newest first) and returned oldest first."""
        pages: list[list[Message]] = []
        before: int | None = None
        while True:
            params = MessagesParams(session_id=session_id, before=before)
            result = await self.sessions.messages(params)
            pages.append(result.messages)
            if result.start <= 0 or not result.messages:
                return [message for page in reversed(pages) for message in page]
            before = result.start

    async def shutdown(self) -> None:
        """``shutdown``: the daemon answers, then stops."""
        await self.remote.request("shutdown", Empty())

    async def _serve(self) -> None:
        try:
            await self.connection.serve()
        finally:
            for stream in list(self._streams):
                stream.close()

    @property
    def closed(self) -> bool:
        """True once the connection is closed (by either side)."""
        return bool(self.connection.closed)

    async def wait_closed(self) -> None:
        """Wait until the daemon closes the connection."""
        if self._serve_task is not None:
            await asyncio.shield(self._serve_task)

    async def close(self) -> None:
        """Close the connection; a private daemon then exits (its stdin reaches EOF)."""
        await self.connection.close()
        if self._serve_task is not None:
            await asyncio.gather(self._serve_task, return_exceptions=True)
        if self.process is not None:
            await _stop_process(self.process)

    async def __aenter__(self) -> AgentClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- raw access ------------------------------------------------------------------------

    async def call(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: Any = Any,
        timeout: float | None = None,
    ) -> Any:
        """Send a request and return its result (decoded as ``result_type``)."""
        return await self.connection.request(
            method, params, result_type=result_type, timeout=timeout
        )

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (no answer)."""
        self.connection.notify(method, params)

    def events(self, session_id: str | None = None) -> EventStream[SessionEvent]:
        """A typed stream of ``session/event`` params (unknown event types are skipped)."""
        return self.stream(session_id, to_event)

    def raw_events(self, session_id: str | None = None) -> EventStream[dict[str, Any]]:
        """The same stream as plain JSON values, exactly as the daemon sent them."""
        return self.stream(session_id, to_dict)

    def stream(
        self, session_id: str | None, convert: Callable[[bytes], T | None]
    ) -> EventStream[T]:
        """A stream of ``convert(params_json_bytes)`` per event (None results are skipped)."""
        stream: EventStream[T] = EventStream(session_id, convert, self._drop_stream)
        if self.closed:
            stream.close()
        else:
            self._streams.append(stream)
        return stream

    def on_notification(self, handler: NotificationHandler) -> None:
        """Call ``handler(method, params_json_bytes)`` for every ``session/event``."""
        self._listeners.append(handler)

    def _drop_stream(self, stream: EventStream[Any]) -> None:
        if stream in self._streams:
            self._streams.remove(stream)

    def _on_event(self, session_id: str | None, data: bytes) -> None:
        for stream in list(self._streams):
            stream.feed(session_id, data)
        for listener in list(self._listeners):
            listener("session/event", data)


async def _stop_process(process: DaemonProcess, grace: float = 5.0) -> None:
    """Wait for a private daemon to exit after its stdin closed; terminate it if it lingers."""
    if process.stdin is not None and not process.stdin.is_closing():
        process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), grace)
    except TimeoutError:
        process.terminate()
        await process.wait()


# --- opening connections -------------------------------------------------------------------


async def connect(
    socket_path: str | os.PathLike[str] | None = None,
    *,
    autostart: bool = False,
    permission_handler: PermissionHandler | None = None,
    name: str = "agentctl",
    startup_timeout: float = 5.0,
    question_handler: QuestionHandler | None = None,
) -> AgentClient:
    """Connect to the shared daemon's Unix socket (path resolved by :mod:`agentctl.launch`).

    With ``autostart``, a refused or missing socket starts ``agentd serve --socket PATH`` in
    the background (output to the daemon log) and retries for up to ``startup_timeout`` s.
    This process's provider variables go with the session methods (see ``provider_env``).
    """
    path = launch.socket_path(os.fspath(socket_path) if socket_path is not None else None)
    try:
        reader, writer = await _open_unix(path)
    except OSError as exc:
        if not autostart:
            raise DaemonUnavailable(
                f"no daemon at {path} ({exc.strerror or exc}); start one with "
                "`agentctl daemon start`"
            ) from None
        reader, writer = await start_daemon(path, startup_timeout)
    return await _unix_client(reader, writer, permission_handler, question_handler, name)


async def connect_running(
    socket_path: str | os.PathLike[str] | None = None,
    *,
    permission_handler: PermissionHandler | None = None,
    name: str = "agentctl",
    question_handler: QuestionHandler | None = None,
) -> AgentClient | None:
    """The shared daemon's client, as :func:`connect` opens it, when one answers on the
    socket; None when nobody listens there (nothing is started). A socket that is not the
    user's is refused (DaemonUnavailable), never taken for an absent daemon."""
    path = launch.socket_path(os.fspath(socket_path) if socket_path is not None else None)
    if not Path(path).exists():  # the usual case of a one-shot: nothing more to import
        return None
    try:
        reader, writer = await _open_unix(path)
    except OSError:
        return None
    return await _unix_client(reader, writer, permission_handler, question_handler, name)


async def _unix_client(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    permission_handler: PermissionHandler | None,
    question_handler: QuestionHandler | None,
    name: str,
) -> AgentClient:
    client = AgentClient(
        reader,
        writer,
        transport="unix",
        permission_handler=permission_handler,
        question_handler=question_handler,
    )
    client.provider_env = provider_variables(os.environ)
    await _initialize(client, name=name)
    return client


async def _open_unix(path: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to the daemon at ``path``: OSError when nobody listens; DaemonUnavailable
    (never retried, never an autostart) when the folder or the peer is not this user's."""
    from agentd.paths import UnsafeSocketError
    from agentd.rpc.connect import open_private_unix

    try:
        return await open_private_unix(path, limit=STREAM_LIMIT)
    except UnsafeSocketError as exc:
        raise DaemonUnavailable(str(exc)) from None


async def start_daemon(
    path: str, timeout: float = 5.0
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Start the shared daemon on ``path`` and return an open connection to it."""
    log_path = launch.log_file()
    pid = launch.spawn_detached(launch.daemon_argv("serve", "--socket", path), log_path)
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            return await _open_unix(path)
        except OSError:
            status = launch.reap(pid)
            if status is not None or time.monotonic() > deadline:
                reason = f"exited with status {status}" if status is not None else "timed out"
                tail = launch.log_tail(log_path, 10)
                raise DaemonUnavailable(
                    f"could not start agentd on {path} ({reason}); log {log_path}:\n{tail}"
                ) from None
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.02)


async def connect_tcp(
    host: str,
    port: int,
    token: str,
    *,
    permission_handler: PermissionHandler | None = None,
    name: str = "agentctl",
    question_handler: QuestionHandler | None = None,
) -> AgentClient:
    """Connect to a daemon serving TCP; ``token`` is checked by its ``initialize``."""
    try:
        reader, writer = await asyncio.open_connection(host, port, limit=STREAM_LIMIT)
    except OSError as exc:
        raise DaemonUnavailable(f"no daemon at {host}:{port} ({exc.strerror or exc})") from None
    client = AgentClient(
        reader,
        writer,
        transport="tcp",
        permission_handler=permission_handler,
        question_handler=question_handler,
    )
    await _initialize(client, name=name, token=token)
    return client


async def spawn_stdio(
    *,
    args: Sequence[str] = (),
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    log_path: str | os.PathLike[str] | None = None,
    permission_handler: PermissionHandler | None = None,
    name: str = "agentctl",
    question_handler: QuestionHandler | None = None,
) -> AgentClient:
    """Spawn a private ``agentd serve --stdio [ARGS…]`` and connect to it over its pipes.

    The daemon's stderr goes to ``log_path`` (appended) or to /dev/null; it exits when the
    client closes. ``env`` replaces the environment (default: inherited). A daemon the
    command line already started (:mod:`agentctl.prestart`) is used when it matches.
    """
    argv = launch.daemon_argv("serve", "--stdio", *args)
    log = None if log_path is None else os.fspath(log_path)
    early = prestart.take(argv, cwd, log, env)
    process: DaemonProcess
    if early is not None:
        process = await prestart.adopt(early, STREAM_LIMIT)
    else:
        process = await _spawn(argv, cwd=cwd, env=env, log_path=log_path)
    assert process.stdout is not None
    assert process.stdin is not None
    client = AgentClient(
        process.stdout,
        process.stdin,
        transport="stdio",
        process=process,
        permission_handler=permission_handler,
        question_handler=question_handler,
    )
    await _initialize(client, name=name)
    return client


async def _spawn(
    argv: list[str],
    *,
    cwd: str | None,
    env: dict[str, str] | None,
    log_path: str | os.PathLike[str] | None,
) -> asyncio.subprocess.Process:
    stderr_fd = _open_log(log_path)
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr_fd,
            cwd=cwd,
            env=env,
            limit=STREAM_LIMIT,
            start_new_session=True,  # a Ctrl-C at the terminal is the client's to handle
        )
    except OSError as exc:
        raise DaemonUnavailable(f"could not run agentd: {exc}") from None
    finally:
        os.close(stderr_fd)


def _open_log(log_path: str | os.PathLike[str] | None) -> int:
    if log_path is None:
        return os.open(os.devnull, os.O_WRONLY)
    return os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


async def _initialize(client: AgentClient, *, name: str, token: str | None = None) -> None:
    try:
        await client.initialize(name=name, token=token)
    except (ConnectionLost, ConnectionError, EOFError) as exc:
        await client.close()
        raise DaemonUnavailable(
            f"the daemon closed the connection during initialize: {exc}"
        ) from None
    except BaseException:
        await client.close()
        raise
