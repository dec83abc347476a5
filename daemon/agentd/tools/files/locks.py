"""Per-file locks shared by a session and its subagents.

Subagents of one session run in parallel, each in its own session, and may touch the same
files. write, edit and undo_edit hold the file's lock from the moment they read it until
their write landed, so two children never change one file at once: the second waits, and
then (edit) finds the file changed since it read it and is refused with the usual stale-file
error, or applies its change on top of the first one. A holder that keeps the file longer
than ``wait`` seconds makes the waiter fail with a :class:`ToolError` naming the holder.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from agentd.tools.base import ToolContext, ToolError
from agentd.tools.files.paths import resolve_path

DEFAULT_WAIT = 60.0


class FileLocks:
    """The locks of one family of sessions (a session and every subagent under it)."""

    def __init__(self, wait: float = DEFAULT_WAIT) -> None:
        self.wait = wait
        self._locks: dict[str, asyncio.Lock] = {}
        self._holders: dict[str, str] = {}

    @contextlib.asynccontextmanager
    async def hold(self, path: Path, holder: str) -> AsyncIterator[None]:
        """Hold ``path``'s lock for ``holder`` (a session id, named in the error others get)."""
        key = str(path)
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with asyncio.timeout(self.wait):
                await lock.acquire()
        except TimeoutError:
            other = self._holders.get(key, "another session")
            raise ToolError(
                f"{path} is being changed by another agent (session {other}) and stayed "
                f"locked for {self.wait:g} s; try again later or leave this file to it."
            ) from None
        self._holders[key] = holder
        try:
            yield
        finally:
            self._holders.pop(key, None)
            lock.release()
            if not lock.locked() and not getattr(lock, "_waiters", None):
                self._locks.pop(key, None)

    def held(self) -> list[str]:
        """Paths locked now (for tests and diagnostics)."""
        return [key for key, lock in self._locks.items() if lock.locked()]


@contextlib.asynccontextmanager
async def changing(ctx: ToolContext, given: str) -> AsyncIterator[None]:
    """Hold the lock of the file ``given`` (a tool's ``path`` argument) while a tool changes
    it, when the session shares locks with subagents (``ctx.path_locks``)."""
    if ctx.path_locks is None:
        yield
        return
    async with ctx.path_locks.hold(resolve_path(given, ctx), ctx.session_id):
        yield
