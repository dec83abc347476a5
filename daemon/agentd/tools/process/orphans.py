"""Tool processes never outlive their daemon.

Two mechanisms, because a daemon killed with SIGKILL runs no cleanup code:

- :func:`die_with_parent` runs in the child between ``fork`` and ``exec`` of each bash call
  and sets ``PR_SET_PDEATHSIG`` (SIGKILL) on the shell, the process-group leader: when the
  daemon dies, the kernel kills the shell at once (Linux; elsewhere nothing happens).
- A **registry**: :func:`register` writes one small file per running call
  (``<daemon pid>-<shell pid>`` holding the call's marker and the daemon's start time) into
  the registry directory (``$XDG_STATE_HOME/agentd/procs``), removed when the call ends.
  :func:`sweep`, run when a daemon starts, kills what is left of the calls of daemons that
  are gone: every process carrying the call's marker (:mod:`agentd.tools.process.proctree`), their
  descendants, and the group of a marked shell. Files of live daemons (another daemon shares
  the directory) are left alone.
- The daemon's own entry (``<daemon pid>-0``, :func:`register_daemon`): every process the
  daemon starts carries a marker that begins with its pid (tool calls, hooks, MCP servers:
  :func:`~agentd.tools.process.proctree.marked_env`), so whatever they left behind
  (a server's children, a daemonized hook) is killed by :func:`end_daemon_processes` when the
  daemon stops, or by the next daemon's :func:`sweep` when it was killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

from agentd.tools.process.proctree import PROC, signal_daemon_marked, signal_marked

PR_SET_PDEATHSIG = 1

_prctl = None
if sys.platform.startswith("linux"):
    with contextlib.suppress(OSError, AttributeError):
        _prctl = ctypes.CDLL(None, use_errno=True).prctl


def die_with_parent(parent_pid: int) -> None:
    """In a forked child before ``exec``: ask for SIGKILL when the parent dies; if it already
    died (the child was re-parented), die now. Never raises."""
    if _prctl is None:
        return
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGKILL)


def register(directory: Path, shell_pid: int, marker: str) -> Path | None:
    """Record a running call; returns the entry to :func:`unregister` (None if it could not be
    written: a full disk must not stop the command)."""
    pid = os.getpid()
    entry = directory / f"{pid}-{shell_pid}"
    started = _own_start.get(pid)
    if not started:  # this process's own start time never changes: read once (per fork)
        started = _own_start[pid] = _start_time(pid)
    try:
        try:
            entry.write_text(f"{marker}\n{started}\n")
        except FileNotFoundError:  # the first call (or the directory was removed)
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            entry.write_text(f"{marker}\n{started}\n")
    except OSError:
        return None
    return entry


_own_start: dict[int, str] = {}
"""This process's start time, by pid (a forked child has its own)."""


def register_daemon(directory: Path) -> Path | None:
    """Record this daemon (see the module docstring); None if it could not be written. (The
    daemon writes the same entry itself at start-up, without importing this module.)"""
    return register(directory, 0, "*")


def end_daemon_processes(entry: Path | None) -> int:
    """At the daemon's stop: SIGKILL every process carrying one of its markers, and drop its
    entry. Returns how many were killed."""
    pid = os.getpid()
    started = _own_start.get(pid) or _start_time(pid)
    killed = len(signal_daemon_marked(pid, signal.SIGKILL, int(started) if started else None))
    unregister(entry)
    return killed


def unregister(entry: Path | None) -> None:
    if entry is not None:
        with contextlib.suppress(OSError):
            entry.unlink()


def sweep(directory: Path) -> int:
    """Kill the leftovers of calls whose daemon is gone and drop their entries; returns how
    many processes were killed. Never raises."""
    killed = 0
    try:
        entries = list(directory.iterdir())
    except OSError:
        return 0
    for entry in entries:
        with contextlib.suppress(OSError, ValueError):
            daemon_pid, shell_pid = (int(part) for part in entry.name.split("-"))
            marker, started = entry.read_text().split("\n")[:2]
            if _start_time(daemon_pid) == started:
                continue  # its daemon (maybe this one) still runs
            if shell_pid == 0:
                since = int(started) if started.isdigit() else None
                killed += len(signal_daemon_marked(daemon_pid, signal.SIGKILL, since))
            else:
                killed += len(signal_marked(shell_pid, marker, signal.SIGKILL))
            entry.unlink()
    return killed


def _start_time(pid: int) -> str:
    """The start time of ``pid`` (clock ticks since boot), "" when it is not running."""
    try:
        with (PROC / str(pid) / "stat").open("rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""
