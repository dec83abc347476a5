"""What a :class:`~agentd.mcp.connection.Connection` needs of a way to reach an MCP server: the
:class:`Transport` interface (open and ``initialize``, ``tools/list`` by cursor, ``tools/call``)
and the :class:`Listener` a transport reports to. Two transports implement it:
:class:`~agentd.mcp.stdio.StdioTransport` (a process, agentd's own JSON-RPC) and
:class:`~agentd.mcp.http.HttpTransport` (streamable HTTP through the official SDK).
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

from agentd import __version__

Json = dict[str, Any]
PROTOCOL_VERSION = "2025-06-18"
CLIENT_INFO: Json = {"name": "agentd", "version": __version__}


class CallFailed(Exception):
    """A request failed (an error answer, a timeout, a lost connection, an answer over the
    size limit); the text says why."""


class LoginNeeded(CallFailed):
    """The server wants an authorization that only the user can give (an HTTP server's 401:
    ``agentctl mcp login NAME``, :mod:`agentd.mcp.login`)."""


def login_hint(name: str) -> str:
    """What a session warning and ``mcp list --check`` say about such a server."""
    return f"it needs you to sign in (OAuth): run `agentctl mcp login {name}`"


class Listener(Protocol):
    """What a transport reports: the methods of the server's notifications, the params of its
    ``notifications/progress``, and that the server went away (with why)."""

    def notified(self, method: str) -> None: ...

    def progressed(self, params: Any) -> None: ...

    def lost(self, reason: str) -> None: ...


class Transport(Protocol):
    """One live way to an MCP server. :meth:`open` is awaited by the task that owns the
    connection, which also leaves ``stack`` (the SDK's HTTP client is a stack of anyio
    context managers that one task must enter and leave); the requests come from any task.
    Every failure of a request is :class:`CallFailed`."""

    async def open(self, stack: contextlib.AsyncExitStack) -> None:
        """Start the server (spawn it, or connect) and run ``initialize``; what undoes that
        is pushed on ``stack``. OSError, or the transport's own error, when it cannot."""
        ...

    def failure(self, exc: BaseException) -> str | None:
        """What ``exc`` (raised by :meth:`open` or by leaving its ``stack``) means for this
        transport, in a line; None to let the connection describe it."""
        ...

    async def list_tools(self, cursor: str | None) -> Json:
        """One page of ``tools/list``: the one after ``cursor`` (None: the first)."""
        ...

    async def call_tool(
        self, name: str, arguments: Json, timeout: float, progress_token: int | None
    ) -> Json:
        """``tools/call``: the result object. With ``progress_token`` the server's progress
        for the call goes to the listener's ``progressed`` with that token."""
        ...


def initialize_params() -> Json:
    """The ``initialize`` params agentd sends (no client capabilities)."""
    return {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
