"""The daemon's MCP server processes: one per (definition, cwd), shared by the sessions that
use it, started lazily and stopped when no session has used it for a while.

A server that died is started again when a session next needs it, at most
:data:`MAX_RESTARTS` times, each after a longer back-off (1 s, 2 s, 4 s); after that it stays
failed until the daemon restarts (the sessions are told once). A server that wants the user
to sign in (:class:`~agentd.mcp.connection.LoginRequired`) is not counted: the next session
tries it again at once, so it works as soon as ``agentctl mcp login NAME`` is done.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentd.log import get_logger
from agentd.mcp.connection import Connection, LoginRequired, StartFailed
from agentd.mcp.servers import ServerDef, qualified_name
from agentd.protocol.mcp import McpServerInfo, McpServerState

log = get_logger("agentd.mcp")

MAX_RESTARTS = 3
BACKOFF_SECONDS = (1.0, 2.0, 4.0)
DEFAULT_IDLE_SECONDS = 300.0


class _Entry:
    """One server of the pool and the sessions using it."""

    def __init__(self, definition: ServerDef, cwd: Path) -> None:
        self.definition = definition
        self.cwd = cwd
        self.connection: Connection | None = None
        self.starting: asyncio.Task[Connection] | None = None
        self.users: set[object] = set()
        self.listeners: dict[object, Callable[[], None]] = {}
        self.failures = 0
        self.retry_at = 0.0
        self.error: str | None = None
        self.idle_timer: asyncio.TimerHandle | None = None
        self.counted: Connection | None = None
        """The last connection whose death was counted (a death is counted once, whether
        its owner task or a session's :meth:`McpPool.acquire` sees it first)."""

    def state(self) -> McpServerState:
        if self.starting is not None and not self.starting.done():
            return "starting"
        if self.connection is not None and self.connection.alive:
            return "running"
        return "failed" if self.error else "stopped"


class McpPool:
    """Every MCP server process of the daemon (created on first use; see the module doc)."""

    def __init__(
        self,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        backoff: tuple[float, ...] = BACKOFF_SECONDS,
    ) -> None:
        """``idle_seconds``: how long a server no session uses keeps running; ``backoff``:
        the wait before the first, second… restart of a dead server (the last repeats)."""
        self.idle_seconds = idle_seconds
        self.backoff = backoff
        self._entries: dict[tuple[Any, ...], _Entry] = {}
        self._stopping: set[asyncio.Future[None]] = set()

    async def acquire(
        self,
        definition: ServerDef,
        cwd: Path,
        user: object,
        env: dict[str, str],
        on_change: Callable[[], None],
    ) -> Connection:
        """The running server for ``definition`` in ``cwd``, started if needed (concurrent
        callers share one start); ``user`` (a session) holds it until :meth:`release`, and
        ``on_change`` is called when its tool list changes. StartFailed says why it is not
        available."""
        entry = self._entry(definition, cwd)
        entry.users.add(user)
        entry.listeners[user] = on_change
        if entry.idle_timer is not None:
            entry.idle_timer.cancel()
            entry.idle_timer = None
        if entry.connection is not None and entry.connection.alive:
            return entry.connection
        if entry.connection is not None:
            self._exited(entry, entry.connection)  # dead, maybe not yet reported by its task
        if entry.starting is None or entry.starting.done():
            self._may_start(entry)
            entry.starting = asyncio.create_task(self._start(entry, env))
        return await asyncio.shield(entry.starting)

    def release(self, definition: ServerDef, cwd: Path, user: object) -> None:
        """``user`` no longer needs the server; the last user's release starts its idle
        timer."""
        entry = self._entries.get(_key(definition, cwd))
        if entry is None:
            return
        entry.users.discard(user)
        entry.listeners.pop(user, None)
        if not entry.users and entry.idle_timer is None:
            loop = asyncio.get_running_loop()
            entry.idle_timer = loop.call_later(self.idle_seconds, self._idle, entry)

    def infos(self) -> list[McpServerInfo]:
        """Every server the daemon started (or failed to start)."""
        return [info(entry) for entry in self._entries.values()]

    def state_of(self, definition: ServerDef, cwd: Path) -> McpServerInfo | None:
        entry = self._entries.get(_key(definition, cwd))
        return info(entry) if entry is not None else None

    async def close(self) -> None:
        """Stop every server (daemon shutdown)."""
        entries = list(self._entries.values())
        self._entries.clear()
        stops = [*(_stop(entry) for entry in entries), *self._stopping]
        await asyncio.gather(*stops, return_exceptions=True)

    # --- internals --------------------------------------------------------------------------

    def _entry(self, definition: ServerDef, cwd: Path) -> _Entry:
        key = _key(definition, cwd)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry(definition, cwd)
        return entry

    @staticmethod
    def _may_start(entry: _Entry) -> None:
        """StartFailed when a dead server may not be started again (yet)."""
        if entry.failures == 0:
            return
        name = entry.definition.name
        if entry.failures > MAX_RESTARTS:
            raise StartFailed(f"{entry.error}; it failed {entry.failures} times, not restarted")
        wait = entry.retry_at - time.monotonic()
        if wait > 0:
            raise StartFailed(f"{entry.error}; {name} is restarted in {wait:.0f} s at the earliest")

    async def _start(self, entry: _Entry, env: dict[str, str]) -> Connection:
        def changed() -> None:
            for listener in list(entry.listeners.values()):
                listener()

        def exited() -> None:
            self._exited(entry, connection)

        connection = Connection(entry.definition, entry.cwd, env, changed, exited)
        entry.connection = connection
        try:
            await connection.start()
        except LoginRequired as exc:  # the user's to fix, at once: no back-off, not counted
            entry.connection = None
            entry.error = str(exc)
            raise
        except StartFailed as exc:
            entry.connection = None
            self._failed(entry, str(exc))
            raise
        entry.error = None
        log.info("mcp server started", server=entry.definition.name, cwd=str(entry.cwd))
        return connection

    def _exited(self, entry: _Entry, connection: Connection) -> None:
        """The server ended: a failure (counted once, for the restart limit) unless it was
        stopped."""
        wanted = connection.stopping or entry.counted is connection
        if entry.connection is connection and not wanted and not connection.login_required:
            entry.counted = connection
            self._failed(entry, connection.error or "the server exited")

    def _failed(self, entry: _Entry, error: str) -> None:
        entry.failures += 1
        entry.error = error
        delay = self.backoff[min(entry.failures - 1, len(self.backoff) - 1)]
        entry.retry_at = time.monotonic() + delay
        log.warning("mcp server failed", server=entry.definition.name, error=error)

    def _idle(self, entry: _Entry) -> None:
        entry.idle_timer = None
        if entry.users:
            return
        self._entries.pop(_key(entry.definition, entry.cwd), None)
        self._stopping.add(asyncio.ensure_future(_stop(entry)))
        self._stopping = {task for task in self._stopping if not task.done()}
        log.info("mcp server stopped (idle)", server=entry.definition.name)


def _key(definition: ServerDef, cwd: Path) -> tuple[Any, ...]:
    return (definition.key, str(cwd))


async def _stop(entry: _Entry) -> None:
    if entry.idle_timer is not None:
        entry.idle_timer.cancel()
    if entry.starting is not None and not entry.starting.done():
        entry.starting.cancel()
    if entry.connection is not None:
        await entry.connection.stop()


def info(entry: _Entry) -> McpServerInfo:
    """``mcp/list``'s view of one server."""
    connection = entry.connection
    server = entry.definition
    tools = connection.tools if connection and connection.alive else []
    names = [qualified_name(server.name, t["name"]) for t in tools if server.offers(t["name"])]
    return McpServerInfo(
        name=entry.definition.name,
        source=entry.definition.source,
        state=entry.state(),
        target=entry.definition.target,
        cwd=str(entry.cwd),
        tools=names,
        error=entry.error,
        sessions=len(entry.users),
    )
