"""Daemon housekeeping that must never flood the log or outlive a crash.

- :class:`RateLimit`: at most one warning per interval for conditions that repeat.
- :func:`loop_exception`: the event loop's error handler (running out of descriptors, a
  callback cancelled by shutdown: one quiet line instead of error tracebacks).
- :func:`sweep_orphans`: at start-up, kill what tool calls of killed daemons left running,
  and record this daemon (:func:`start_orphan_sweep`: the same in a thread);
  :func:`end_processes`: at its stop, kill what its tool calls, hooks and MCP servers left
  running.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentd import paths
from agentd.log import get_logger

log = get_logger("agentd.listen")


class RateLimit:
    """``ready()`` is true at most once per ``interval`` seconds (for repeated warnings)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._next = 0.0

    def ready(self) -> bool:
        now = time.monotonic()
        if now < self._next:
            return False
        self._next = now + self.interval
        return True


_own_entry: list[Path | None] = []


def sweep_orphans() -> None:
    """Kill what tool calls of killed daemons left running, then record this daemon
    (:mod:`agentd.tools.process.orphans`: an entry ``<pid>-0``, so the next daemon ends what
    this one's processes leave if it is killed). Blocks."""
    directory = paths.state_dir() / "procs"
    _sweep(directory, _sweeper(directory))


def start_orphan_sweep() -> None:
    """:func:`sweep_orphans` in a thread, for a daemon starting up. The sweeping code is
    imported here, on the caller's thread, before the thread starts: a module imported by
    two threads at once fails halfway when their imports meet in a cycle (one thread gets a
    partially initialised module, the other a KeyError), so the thread imports nothing."""
    directory = paths.state_dir() / "procs"
    threading.Thread(
        target=_sweep, args=(directory, _sweeper(directory)), name="orphan-sweep", daemon=True
    ).start()


def _sweeper(directory: Path) -> Callable[[Path], int] | None:
    """The sweep when ``directory`` holds entries; None (the tools stay unimported) when not."""
    try:
        with os.scandir(directory) as entries:
            busy = next(entries, None) is not None
    except OSError:
        busy = False
    if not busy:
        return None
    from agentd.tools.process.orphans import sweep

    return sweep


def _sweep(directory: Path, sweep: Callable[[Path], int] | None) -> None:
    if sweep is not None:
        killed = sweep(directory)
        if killed:
            log.info("killed processes left by a stopped daemon", count=killed)
    _own_entry.append(_register_self(directory))


def _register_self(directory: Path) -> Path | None:
    """This daemon's registry entry (the format of :func:`agentd.tools.process.orphans.
    register_daemon`, written without importing the tools); None when it cannot be."""
    entry = directory / f"{os.getpid()}-0"
    try:
        started = Path("/proc/self/stat").read_bytes().rsplit(b")", 1)[1].split()[19].decode()
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        entry.write_text(f"*\n{started}\n")
    except (OSError, IndexError):
        return None
    return entry


def end_processes() -> None:
    """At the daemon's stop: kill every process still carrying one of its markers (a tool
    call's background job, a hook's daemonized child, an MCP server's children), and drop
    its registry entry. Without a marker ever handed out, there is nothing to look for."""
    entry = _own_entry[0] if _own_entry else None
    proctree = sys.modules.get("agentd.tools.process.proctree")
    if proctree is None or not proctree.markers_issued():
        if entry is not None:
            entry.unlink(missing_ok=True)
        return
    from agentd.tools.process.orphans import end_daemon_processes

    killed = end_daemon_processes(entry)
    if killed:
        log.info("killed processes left by tool calls, hooks and MCP servers", count=killed)


_fd_warning = RateLimit(60.0)


def loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's error handler: running out of file descriptors while accepting is one
    rate-limited warning (asyncio pauses accepting for a second and retries), a callback
    cancelled by shutdown is an info line; anything else goes to asyncio's default handler."""
    message = str(context.get("message", ""))
    error = context.get("exception")
    if message.startswith("socket.accept() out of system resource"):
        if _fd_warning.ready():
            log.warning("out of file descriptors: accepting paused", error=str(error))
        return
    if isinstance(error, asyncio.CancelledError):
        log.info("callback cancelled", detail=message[:200])
        return
    loop.default_exception_handler(context)
