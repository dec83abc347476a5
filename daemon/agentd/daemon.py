"""The daemon object: options, live connections, sessions, the router and graceful shutdown.

:func:`build_daemon` is the one place that composes a daemon from its options: the session
service, the method table (:mod:`agentd.jsonrpc.handlers`) and the daemon that serves it.
:class:`Daemon` knows nothing about sockets: a :class:`Listener` (see :mod:`agentd.listen`)
accepts streams and hands each to :meth:`Daemon.attach`. :meth:`Daemon.run` starts the
listener and waits for :meth:`Daemon.request_shutdown` (the ``shutdown`` method, SIGTERM,
SIGINT, or the end of the stdio stream), then stops in this order: stop accepting, close the
sessions (runs cancelled, files flushed), close every connection (queued frames flushed), let
the listener remove its files.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import msgspec

from agentd import __version__
from agentd.errors import InvalidParams
from agentd.jsonrpc.clients import Client
from agentd.jsonrpc.handlers import build_router
from agentd.log import get_logger
from agentd.protocol.lifecycle import LanguageServerInfo
from agentd.protocol.mcp import McpServerInfo
from agentd.protocol.methods import WebOpenParams, WebOpenResult
from agentd.protocol.metrics import DaemonMetricsResult
from agentd.rpc import Connection
from agentd.rpc.outbox import QUEUE_BYTES, QUEUE_FRAMES, STALL_TIMEOUT
from agentd.session.service import SessionService
from agentd.telemetry.lag import LoopLag

if TYPE_CHECKING:
    from agentd.web.server import WebServer

log = get_logger("agentd.daemon")

Transport = Literal["stdio", "socket", "tcp", "none"]
"""Where JSON-RPC clients connect; ``none``: nowhere (a daemon serving only ``--http``)."""
SHUTDOWN_TIMEOUT = 10.0
"""Seconds allowed for closing the sessions, then for closing the connections, at shutdown."""
AUTH_TIMEOUT = 10.0
"""Seconds a TCP client has to authenticate (``initialize`` with the token)."""
MAX_UNAUTHENTICATED = 64
"""TCP connections waiting to authenticate at once; more are closed on accept."""


PeerCheck = Callable[[asyncio.StreamWriter], Awaitable[bool]]
"""Close the connection and return True when its peer is refused."""


class DaemonOptions(msgspec.Struct):
    """Everything ``agentd serve`` was told. Paths left None mean the XDG defaults."""

    transport: Transport = "socket"
    socket_path: Path | None = None
    tcp_host: str = "127.0.0.1"
    tcp_port: int = 0
    allow_remote: bool = False
    http: tuple[str, int] | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    insecure_http: bool = False
    token_file: Path | None = None
    session_dir: Path | None = None
    config_file: Path | None = None
    log_file: Path | None = None
    log_level: str = "info"
    queue_limit: int = QUEUE_FRAMES
    queue_bytes: int = QUEUE_BYTES
    stall_timeout: float = STALL_TIMEOUT
    auth_timeout: float = AUTH_TIMEOUT
    max_unauthenticated: int = MAX_UNAUTHENTICATED
    idle_unload: float = 300.0
    max_loaded_sessions: int = 256
    provider: str | None = None
    model: str | None = None


class Listener(Protocol):
    """Accepts client streams for a daemon (one implementation per transport)."""

    async def start(self, daemon: Daemon) -> None:
        """Bind and begin handing streams to ``daemon.attach``; raise ListenError to refuse."""

    async def stop(self) -> None:
        """Stop accepting new clients."""

    async def close(self) -> None:
        """Release what :meth:`start` created (socket, pid and lock files)."""


def build_daemon(options: DaemonOptions, peer_check: PeerCheck | None = None) -> Daemon:
    """The daemon for ``options``, with its session service and method table; ``peer_check``
    (from the transports) refuses a connection whose peer is a tool process of this daemon
    (the web front-end asks it for every connection)."""
    service = SessionService(
        options.session_dir,
        options.config_file,
        idle_unload=options.idle_unload,
        max_loaded_sessions=options.max_loaded_sessions,
        provider=options.provider,
        model=options.model,
    )
    return Daemon(options, service, peer_check)


class Daemon:
    """One running agentd: shared by every connection, independent of any of them."""

    def __init__(
        self, options: DaemonOptions, service: SessionService, peer_check: PeerCheck | None = None
    ) -> None:
        self.options = options
        self.version = __version__
        self.pid = os.getpid()
        self.started_at = time.monotonic()
        self.clients: dict[int, Client] = {}
        self.tcp_token: str | None = None
        self.sessions = service
        self.router = build_router(self, service)
        self.web: WebServer | None = None
        self.peer_check = peer_check
        """From the transports: True when a connection's peer must be refused (a tool
        process of this daemon); the web front-end asks it for every connection."""
        self._shutdown = asyncio.Event()
        self.loop_lag = LoopLag()
        self._gone = (0, 0)
        """Bytes written to and -32603 answers of the connections that closed."""

    @property
    def transport(self) -> str:
        return self.options.transport

    @property
    def connections(self) -> list[Connection]:
        """The live connections."""
        return [client.connection for client in self.clients.values()]

    def client(self, connection: Connection) -> Client:
        """The daemon's record of ``connection`` (KeyError for a connection it never served)."""
        return self.clients[connection.id]

    def connection_count(self) -> int:
        return len(self.clients)

    def loaded_sessions(self) -> list[str]:
        return self.sessions.loaded_ids()

    def mcp_servers(self) -> list[McpServerInfo]:
        """The MCP servers the daemon started (``daemon/status``)."""
        return self.sessions.mcp_running()

    def language_servers(self) -> list[LanguageServerInfo]:
        """The language servers the daemon started (``daemon/status``)."""
        return self.sessions.language_servers_running()

    @property
    def uptime(self) -> float:
        """Seconds since the daemon object was created."""
        return time.monotonic() - self.started_at

    def metrics(self) -> DaemonMetricsResult:
        """``daemon/metrics`` (the web server's ``/metrics`` too); starts the loop-lag probe."""
        self.loop_lag.start()
        live = self.connections
        gone_bytes, gone_errors = self._gone
        telemetry = self.sessions.telemetry()
        counters = telemetry.counters if telemetry is not None else None
        errors = dict(counters.errors) if counters is not None else {}
        rpc_errors = gone_errors + sum(c.internal_errors for c in live)
        if rpc_errors:
            errors["rpc_internal_error"] = rpc_errors
        result = DaemonMetricsResult(
            uptime_s=round(self.uptime, 3),
            connections=len(live),
            sessions_loaded=len(self.loaded_sessions()),
            runs_active=0,
            runs_started=0,
            queue_depth=sum(c.queued for c in live),
            queued_messages=self.sessions.queued_messages(),
            loop_lag_ms=round(self.loop_lag.last_ms, 3),
            loop_lag_max_ms=round(self.loop_lag.max_ms, 3),
            bytes_out=gone_bytes + sum(c.bytes_out for c in live),
            errors=errors,
            telemetry=telemetry is not None and telemetry.export is not None,
        )
        if counters is None:
            return result
        return msgspec.structs.replace(
            result,
            runs_active=counters.runs_active,
            runs_started=counters.runs_started,
            runs_ended=dict(counters.runs_ended),
            approvals_pending=counters.approvals_pending,
            approvals=counters.approvals,
            approval_wait_s=round(counters.approval_wait_s, 3),
            input_tokens=counters.input_tokens,
            output_tokens=counters.output_tokens,
            cost_usd=counters.cost,
            tool_calls=counters.tool_calls,
            tool_errors=counters.tool_errors,
        )

    async def start_web(
        self, host: str, port: int, *, allow_remote: bool | None = None
    ) -> WebServer:
        """The HTTP front-end, started on ``host:port`` unless it already runs (then as it is).

        Imports :mod:`agentd.web` only now. ``allow_remote`` None: as the daemon was told.
        Raises ``WebListenError`` when it cannot bind.
        """
        if self.web is None:
            from agentd.web.remote import TlsFiles
            from agentd.web.server import WebServer

            options = self.options
            if allow_remote is None:
                allow_remote = options.allow_remote
            tls = None
            if options.tls_cert is not None and options.tls_key is not None:
                tls = TlsFiles(options.tls_cert, options.tls_key)
            server = WebServer(
                host,
                port,
                allow_remote=allow_remote,
                tls=tls,
                insecure_http=options.insecure_http,
                peer_check=self.peer_check,
                metrics=self.metrics,
            )
            await server.start(self.sessions)
            self.web = server
        return self.web

    async def open_web(self, params: WebOpenParams) -> WebOpenResult:
        """``daemon/web``: the running web front-end, or a new one on the default port (any
        free port when that one is taken and no port was asked for); a one-time link to its
        page. InvalidParams when it cannot listen."""
        from agentd.web.server import DEFAULT_PORT, WebListenError

        try:
            try:
                port = DEFAULT_PORT if params.port is None else params.port
                server = await self.start_web(params.host, port)
            except WebListenError:
                if params.port is not None:
                    raise
                server = await self.start_web(params.host, 0)
        except WebListenError as exc:
            raise InvalidParams(str(exc)) from None
        return WebOpenResult(url=server.link(params.cwd), host=server.host, port=server.port)

    def request_shutdown(self) -> None:
        """Ask :meth:`run` to stop gracefully (idempotent, safe from signal handlers)."""
        self._shutdown.set()

    async def attach(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        transport: str,
        name: str,
        authorized: bool = True,
    ) -> None:
        """Serve one client stream until it ends. ``authorized`` False requires a token."""
        if self._shutdown.is_set():
            writer.close()
            return
        options = self.options
        connection = Connection(
            reader,
            writer,
            self.router,
            name=name,
            transport=transport,
            queue_limit=options.queue_limit,
            queue_bytes=options.queue_bytes,
            stall_timeout=options.stall_timeout,
        )
        client = Client(connection, authorized=authorized)
        self.clients[connection.id] = client
        timer = None if authorized else self._auth_deadline(client)
        log.info("client connected", conn_id=connection.id, name=name, transport=transport)
        try:
            await connection.serve()
        finally:
            if timer is not None:
                timer.cancel()
            del self.clients[connection.id]
            gone_bytes, gone_errors = self._gone
            self._gone = (
                gone_bytes + connection.bytes_out,
                gone_errors + connection.internal_errors,
            )
            self.sessions.forget(client)
            log.info("client disconnected", conn_id=connection.id, name=name)

    def _auth_deadline(self, client: Client) -> asyncio.TimerHandle:
        """Close the client's connection if it has not authenticated within ``auth_timeout``."""

        def expire() -> None:
            if not client.authorized and not client.closed:
                log.info("unauthenticated client timed out", conn_id=client.key)
                client.connection.close_soon()

        loop = asyncio.get_running_loop()
        return loop.call_later(self.options.auth_timeout, expire)

    def unauthenticated(self) -> int:
        """How many connections have not authenticated yet (TCP clients before their token)."""
        return sum(1 for c in self.clients.values() if not c.authorized and not c.closed)

    async def run(self, listener: Listener) -> int:
        """Serve until shutdown is requested; returns the exit code (0).

        Errors of ``listener.start`` (e.g. ListenError) propagate after cleanup.
        """
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.request_shutdown)
        try:
            await listener.start(self)
            self.sessions.start()
            log.info("daemon started", transport=self.options.transport, version=__version__)
            await self._shutdown.wait()
            log.info("daemon stopping")
            await self._stop(listener)
        finally:
            await listener.close()
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)
        log.info("daemon stopped")
        return 0

    async def _stop(self, listener: Listener) -> None:
        await listener.stop()
        self.loop_lag.stop()
        if self.web is not None:
            await self.web.stop()
        try:
            async with asyncio.timeout(SHUTDOWN_TIMEOUT):
                await self.sessions.close()
        except Exception:
            log.exception("closing the sessions failed")
        if self.web is not None:
            await self.web.close()
        closing = [connection.close() for connection in self.connections]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SHUTDOWN_TIMEOUT):
                await asyncio.gather(*closing, return_exceptions=True)
