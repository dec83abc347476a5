"""Unloading sessions nobody uses, so descriptors and memory stay bounded however many
sessions a long-lived daemon touches.

A loaded session is **idle** when no run is in progress, whoever is subscribed to it: a
subscribed session is unloaded too, its subscribers kept by the manager and subscribed again
when it is next loaded (see :meth:`agentd.session.manager.SessionManager.unload`), so one
connection watching thousands of sessions cannot hold a descriptor for each.

:class:`IdleUnloader` checks every few seconds and unloads (closes the file and its lock,
drops the runtime) an idle session once it has been idle for ``idle_seconds`` (``agentd
serve --idle-unload``, default 300; 0 keeps sessions loaded), and, whenever more than
``max_loaded`` sessions are loaded (``--max-loaded-sessions``, default 256), the idle ones
unused the longest until the count fits. A running session, or one with a background
process running (unloading would end it), is never unloaded; the next
request naming an unloaded session loads it again (its ``seq`` goes on, see
:mod:`agentd.session.bus`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from agentd.log import get_logger

if TYPE_CHECKING:
    from agentd.session.runtime import SessionRuntime

log = get_logger("agentd.sessions")

DEFAULT_IDLE_SECONDS = 300.0
DEFAULT_MAX_LOADED = 256


class LoadedSessions(Protocol):
    """What the unloader needs of the :class:`~agentd.session.manager.SessionManager`."""

    @property
    def loaded(self) -> Mapping[str, SessionRuntime]:
        """The loaded sessions by id."""
        ...

    async def unload(self, session_id: str) -> bool:
        """Close one loaded session (its file, its lock) and forget its runtime; False when
        it was not loaded."""
        ...


class IdleUnloader:
    """See the module docstring. :meth:`touch` marks a session as just used."""

    def __init__(
        self,
        sessions: LoadedSessions,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        max_loaded: int = DEFAULT_MAX_LOADED,
    ) -> None:
        self.sessions = sessions
        self.idle_seconds = idle_seconds
        self.max_loaded = max_loaded
        self._used: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None

    def touch(self, session_id: str) -> None:
        self._used[session_id] = time.monotonic()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="idle-unload")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        interval = min(max(self.idle_seconds / 4, 0.5), 5.0) if self.idle_seconds else 5.0
        while True:
            await asyncio.sleep(interval)
            try:
                await self.sweep()
            except Exception:
                log.exception("unloading idle sessions failed")

    async def sweep(self) -> list[str]:
        """Unload what is due now; returns the unloaded ids."""
        now = time.monotonic()
        idle: list[tuple[float, str]] = []
        for session_id, runtime in list(self.sessions.loaded.items()):
            if _in_use(runtime):
                self._used[session_id] = now
            else:
                idle.append((self._used.setdefault(session_id, now), session_id))
        idle.sort()
        excess = len(self.sessions.loaded) - self.max_loaded
        due = [
            session_id
            for rank, (used, session_id) in enumerate(idle)
            if rank < excess or (self.idle_seconds and now - used >= self.idle_seconds)
        ]
        for session_id in due:
            self._used.pop(session_id, None)
            await self.sessions.unload(session_id)
        for session_id in set(self._used) - set(self.sessions.loaded):
            del self._used[session_id]
        if due:
            log.info("unloaded idle sessions", count=len(due), loaded=len(self.sessions.loaded))
        return due


def _in_use(runtime: SessionRuntime) -> bool:
    """A run, or a background process that must not end with an unload."""
    processes = runtime.processes
    return runtime.running or (processes is not None and bool(processes.live()))
