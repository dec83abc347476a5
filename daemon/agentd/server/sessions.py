"""The registry of loaded sessions, shared by every connection of the daemon.

Sessions live here, not in connections: a session survives the disconnect of the client that
created it, and any connection may watch any session (``session/subscribe``). A session that is
prompted while unloaded is loaded implicitly from its file.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from agentd.errors import InvalidParams, SessionExists, SessionNotFound
from agentd.protocol.events import SessionEvent, SessionWarning
from agentd.server.idle import DEFAULT_IDLE_SECONDS, DEFAULT_MAX_LOADED, IdleUnloader
from agentd.server.runtime import SessionRuntime

if TYPE_CHECKING:
    from agentd.protocol.methods import SessionNewParams
    from agentd.rpc import Connection, Router
    from agentd.server.factory import Services

log = structlog.get_logger("agentd.sessions")


def client_env(conn: Connection, provider_env: dict[str, str] | None) -> dict[str, str] | None:
    """A request's ``providerEnv``, accepted from same-machine clients only (Unix socket,
    stdio); InvalidParams over TCP, where it would put keys on the network."""
    if provider_env is not None and conn.transport == "tcp":
        raise InvalidParams("`providerEnv` is accepted over the Unix socket or stdio only")
    return provider_env


class SessionManager:
    """Owns every loaded session of the daemon, independent of connections."""

    def __init__(self, daemon: Any) -> None:
        self.daemon = daemon
        self.loaded: dict[str, SessionRuntime] = {}
        self._services: Services | None = None
        self._loading: dict[str, asyncio.Future[SessionRuntime]] = {}
        options = getattr(daemon, "options", None)
        self.idle = IdleUnloader(
            self,
            idle_seconds=getattr(options, "idle_unload", DEFAULT_IDLE_SECONDS),
            max_loaded=getattr(options, "max_loaded_sessions", DEFAULT_MAX_LOADED),
        )

    @property
    def services(self) -> Services:
        """Daemon-wide services (config, HTTP client, store root), created on first use."""
        if self._services is None:
            from agentd.server.factory import Services

            options = getattr(self.daemon, "options", None)
            self._services = Services(
                session_dir=getattr(options, "session_dir", None),
                config_file=getattr(options, "config_file", None),
            )
        return self._services

    def loaded_ids(self) -> list[str]:
        """Ids of the sessions loaded in this daemon."""
        return list(self.loaded)

    async def create(self, params: SessionNewParams, conn: Connection | None) -> SessionRuntime:
        """Open a new session; its events go to ``conn`` (if given).

        A caller-chosen id is reserved before the first await, so requests for that id that
        arrive right behind ``session/new`` (a pipelined script) wait for it instead of failing.
        """
        from agentd.server.factory import new_session

        key = params.session_id
        if key is not None and (key in self.loaded or key in self._loading):
            raise SessionExists(f"session id {key!r} is already in use")
        runtime = await self._once(key, lambda: new_session(self.services, params))
        if conn is not None:
            self.watch(runtime, conn)
        log.info("session created", session_id=runtime.id, cwd=runtime.settings.cwd)
        return runtime

    async def get(self, session_id: str) -> SessionRuntime:
        """The loaded session, loading it from disk if it exists; SessionNotFound otherwise."""
        self.idle.touch(session_id)
        runtime = self.loaded.get(session_id)
        if runtime is not None:
            return runtime
        return await self.load(session_id=session_id)

    async def load(
        self,
        *,
        session_id: str | None = None,
        path: str | None = None,
        client_env: dict[str, str] | None = None,
    ) -> SessionRuntime:
        """Load a session from its file (once, even when asked concurrently)."""
        from agentd.server.factory import load_session

        if session_id is not None and session_id in self.loaded:
            return self.loaded[session_id]
        if path is not None and (same := self._loaded_file(Path(path))) is not None:
            return same  # its file is locked by this daemon: never open it twice
        return await self._once(
            session_id or str(path),
            lambda: load_session(
                self.services, session_id=session_id, path=path, client_env=client_env
            ),
        )

    async def _once(
        self, key: str | None, build: Callable[[], Awaitable[SessionRuntime]]
    ) -> SessionRuntime:
        """Build a runtime under ``key``; concurrent callers with the same key share it."""
        if key is not None and key in self._loading:
            return await asyncio.shield(self._loading[key])
        future: asyncio.Future[SessionRuntime] = asyncio.get_running_loop().create_future()
        if key is not None:
            self._loading[key] = future
        try:
            runtime = await build()
            existing = self.loaded.get(runtime.id)
            if existing is not None:  # loaded by path while also loaded by id
                runtime.file.close()
                runtime = existing
            self.loaded[runtime.id] = runtime
            self.idle.touch(runtime.id)
            future.set_result(runtime)
            return runtime
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: concurrent waiters re-raise it themselves
            raise
        finally:
            if key is not None:
                del self._loading[key]

    def _loaded_file(self, path: Path) -> SessionRuntime | None:
        for runtime in self.loaded.values():
            with contextlib.suppress(OSError):
                if runtime.file.path.samefile(path):
                    return runtime
        return None

    def watch(
        self, runtime: SessionRuntime, conn: Connection, since_seq: int | None = None
    ) -> tuple[int, bool]:
        """Subscribe ``conn`` to the session's events (unsubscribed when it closes); see
        :meth:`EventBus.subscribe` for ``since_seq`` and the result.

        A connection that was not subscribed yet first gets the problems found when the file
        was loaded (damaged lines, a migration) as ``session_warning`` events with ``seq: 0``,
        however it came to watch (``session/load``, ``session/subscribe``, an implicit load).
        """
        if conn.id not in runtime.bus.subscribers:
            for warning in runtime.file.warnings:
                event = SessionWarning(message=warning.message, line=warning.line)
                frame = SessionEvent(session_id=runtime.id, seq=0, event=event)
                conn.notify("session/event", frame)
            conn.add_close_callback(lambda c: runtime.bus.unsubscribe(c))
        return runtime.bus.subscribe(conn, since_seq)

    def find_path(self, session_id: str) -> Path:
        """The file of a session that exists on disk; SessionNotFound otherwise."""
        from agentd.store import find_session

        path = find_session(self.services.session_root, session_id)
        if path is None:
            raise SessionNotFound(f"no session {session_id!r} (see session/list)")
        return path

    async def unload(self, session_id: str) -> bool:
        """Close a loaded session (its file is kept); return whether it was loaded."""
        runtime = self.loaded.pop(session_id, None)
        if runtime is None:
            return False
        await runtime.shutdown()
        return True

    async def close(self) -> None:
        """Cancel running runs and flush every session file (daemon shutdown)."""
        runtimes = list(self.loaded.values())
        self.loaded.clear()
        await asyncio.gather(*(r.shutdown() for r in runtimes), return_exceptions=True)
        if self._services is not None:
            await self._services.close()


def register_sessions(router: Router, daemon: Any) -> None:
    """Register every session method on ``router``."""
    from agentd.server import run_methods, store_methods

    run_methods.register(router, daemon.sessions)
    store_methods.register(router, daemon.sessions)
