"""Lifecycle methods: ``initialize``, ``shutdown``, ``daemon/status``, ``daemon/metrics``,
``daemon/web``, and the call guard.

Rules enforced by :func:`guard` before every request:

* on TCP, nothing but ``initialize`` is accepted until it has presented the daemon's token
  (-32001, and the connection is closed);
* everywhere, ``initialize`` must come first; only ``daemon/status`` is allowed before it
  (-32004 otherwise).
"""

from __future__ import annotations

import asyncio
import hmac
import os
from typing import TYPE_CHECKING, Protocol

from agentd import __version__
from agentd.errors import InvalidRequest, NotInitialized, Unauthorized
from agentd.log import get_logger, settle
from agentd.protocol.base import Empty
from agentd.protocol.lifecycle import LanguageServerInfo
from agentd.protocol.mcp import McpServerInfo
from agentd.protocol.methods import (
    PROTOCOL_VERSION,
    DaemonStatusResult,
    InitializeParams,
    InitializeResult,
    OkResult,
    SecurityStatus,
    ServerCapabilities,
    ServerInfo,
    WebOpenParams,
    WebOpenResult,
)
from agentd.protocol.metrics import DaemonMetricsResult

if TYPE_CHECKING:
    from agentd.jsonrpc.clients import Client
    from agentd.rpc import Connection

log = get_logger("agentd.lifecycle")

OPEN_METHODS = frozenset({"initialize", "daemon/status"})
"""Methods a connection may call before ``initialize``."""


class DaemonControl(Protocol):
    """What the lifecycle methods need from the daemon (:class:`agentd.daemon.Daemon`)."""

    tcp_token: str | None

    @property
    def uptime(self) -> float: ...

    @property
    def transport(self) -> str: ...

    def client(self, connection: Connection) -> Client:
        """The daemon's record of ``connection``."""
        ...

    def connection_count(self) -> int: ...

    def loaded_sessions(self) -> list[str]: ...

    def mcp_servers(self) -> list[McpServerInfo]: ...

    def language_servers(self) -> list[LanguageServerInfo]: ...

    def request_shutdown(self) -> None: ...

    def metrics(self) -> DaemonMetricsResult:
        """``daemon/metrics``: the daemon's load and counts."""
        ...

    async def open_web(self, params: WebOpenParams) -> WebOpenResult:
        """``daemon/web``: the running web front-end, or a new one; a one-time link to it."""
        ...


def guard(client: Client, method: str) -> None:
    """Refuse calls that come before a successful ``initialize`` (see the module docstring)."""
    if client.initialized:
        return
    if not client.authorized and method != "initialize":
        client.connection.close_soon()
        raise Unauthorized("this TCP connection must call initialize with the token first")
    if method not in OPEN_METHODS:
        raise NotInitialized(f"call initialize before {method}")


class Lifecycle:
    """The handlers of ``initialize``, ``shutdown`` and ``daemon/status`` for one daemon."""

    def __init__(self, daemon: DaemonControl) -> None:
        self.daemon = daemon

    def initialize(self, connection: Connection, params: InitializeParams) -> InitializeResult:
        """Check the token (TCP), record the client, answer with the server's identity."""
        client = self.daemon.client(connection)
        if client.initialized:
            raise InvalidRequest("initialize was already called on this connection")
        if not client.authorized:
            _check_token(client, self.daemon.tcp_token, params.token)
        client.initialized = True
        client.client_info = info = params.client_info
        client.capabilities = params.capabilities
        log.info(
            "client initialized",
            client=info.name if info else None,
            client_version=info.version if info else None,
            protocol_version=params.protocol_version,
        )
        asyncio.get_running_loop().call_soon(settle)  # the log kept so far, once this is written
        return InitializeResult(
            protocol_version=PROTOCOL_VERSION,
            server_info=ServerInfo(name="agentd", version=__version__),
            capabilities=ServerCapabilities(),
        )

    def shutdown(self, connection: Connection, params: Empty) -> OkResult:
        """Answer, then stop the daemon (the answer is flushed before connections close)."""
        log.info("shutdown requested", conn_id=connection.id)
        asyncio.get_running_loop().call_soon(self.daemon.request_shutdown)
        return OkResult()

    async def web(self, connection: Connection, params: WebOpenParams) -> WebOpenResult:
        """Start the web chat unless it runs; a one-time link to it."""
        return await self.daemon.open_web(params)

    def metrics(self, connection: Connection, params: Empty) -> DaemonMetricsResult:
        """Sessions loaded, runs active, queue depth, loop lag, bytes out, errors…"""
        return self.daemon.metrics()

    def status(self, connection: Connection, params: Empty) -> DaemonStatusResult:
        """Version, pid, uptime, connection count, loaded sessions and transport."""
        daemon = self.daemon
        return DaemonStatusResult(
            version=__version__,
            pid=os.getpid(),
            uptime_s=round(daemon.uptime, 3),
            connections=daemon.connection_count(),
            sessions=daemon.loaded_sessions(),
            transport=daemon.transport,
            security=_security(),
            mcp_servers=daemon.mcp_servers(),
            language_servers=daemon.language_servers(),
        )


def _security() -> SecurityStatus:
    from agentd import hardening

    return SecurityStatus(
        dumpable=hardening.is_dumpable(),
        openat2=hardening.openat2_available(),
        landlock_abi=hardening.landlock_abi(),
    )


def _check_token(client: Client, expected: str | None, given: str | None) -> None:
    """Accept the client when ``given`` equals the daemon's token; else refuse and close."""
    if expected and given and hmac.compare_digest(expected.encode(), given.encode()):
        client.authorized = True
        return
    log.warning("unauthorized TCP client", conn_id=client.key, token_given=given is not None)
    client.connection.close_soon()
    raise Unauthorized("missing or wrong token" if given else "initialize needs the token")
