"""Finding every process one bash call started, so a timeout or cancel can kill them all.

A command's processes are found three ways, from one scan of ``/proc``:

- its process group (the shell is started with ``setsid``, so the group is the shell's pid);
- its **marker**: every call runs with ``AGENTD_TOOL_RUN=<unique token>`` in its environment,
  which children inherit; ``/proc/PID/environ`` still shows it after a ``setsid``, a double
  fork or a re-parenting to init, so daemonized children are found too;
- descendants (by parent pid) of the processes found so far, so a child that cleared its
  environment (``env -i``) is found while its parent lives.

What escapes: a process that both left the group and started with an environment without
the marker, and whose parent already exited (e.g. ``setsid env -i cmd &`` inside a
``nohup``). Without ``/proc`` (not Linux) only the process group is signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

MARKER_VAR = "AGENTD_TOOL_RUN"
PROC = Path("/proc")


class ProcInfo(NamedTuple):
    """One running process as seen in ``/proc/PID/stat`` (``start``: clock ticks since boot)."""

    pid: int
    ppid: int
    pgid: int
    start: int


_issued: list[bool] = []


def new_marker() -> str:
    """A fresh token for :data:`MARKER_VAR` (unique per call), beginning with this process's
    pid (:func:`signal_daemon_marked` finds them all)."""
    if not _issued:
        _issued.append(True)
    return f"{os.getpid()}-{os.urandom(8).hex()}"


def markers_issued() -> bool:
    """Whether this process handed out any marker (else none of its processes carries one)."""
    return bool(_issued)


def marked_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus a fresh marker: for a process the daemon starts outside a tool call (an
    MCP server), so it and every child it starts are found like a tool call's, and ended
    when the daemon stops (:func:`signal_daemon_marked`)."""
    return {**env, MARKER_VAR: new_marker()}


def signal_daemon_marked(
    daemon_pid: int, sig: signal.Signals, started: int | None = None
) -> set[int]:
    """Send ``sig`` to every process carrying a marker of the daemon ``daemon_pid`` (markers
    start with its pid: :func:`new_marker`) and to their descendants; returns the pids.
    ``started``: the daemon's start (clock ticks since boot, as ``/proc/PID/stat`` has it),
    when known: a process older than its daemon cannot carry the daemon's marker, so only the
    environments of younger ones are read (on a machine running hundreds of processes, most
    of the scan a one-shot run would do at its exit)."""
    prefix = f"{MARKER_VAR}={daemon_pid}-".encode()
    procs = list(_running())
    young = procs if started is None else [p for p in procs if p.start >= started]
    marked = {p.pid for p in young if _has_marker_prefix(p.pid, prefix)}
    marked.discard(os.getpid())
    found = _with_descendants(marked, procs)
    found.discard(os.getpid())
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
    return found


def _has_marker_prefix(pid: int, prefix: bytes) -> bool:
    try:
        environ = _read(f"{PROC}/{pid}/environ")
    except OSError:
        return False
    return prefix in environ and any(item.startswith(prefix) for item in environ.split(b"\0"))


def tracked_pids(pgid: int, marker: str) -> set[int]:
    """Running (not zombie) pids belonging to the call whose group is ``pgid`` and whose
    environment carries ``marker``; empty when ``/proc`` cannot be read."""
    procs = list(_running())
    needle = f"{MARKER_VAR}={marker}".encode()
    found = {p.pid for p in procs if p.pgid == pgid or _has_marker(p.pid, needle)}
    found.discard(os.getpid())
    return _with_descendants(found, procs)


def signal_tree(pgid: int, marker: str, sig: signal.Signals) -> set[int]:
    """Send ``sig`` to the group ``pgid`` and every tracked pid; returns the pids signalled."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
    pids = tracked_pids(pgid, marker)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
    return pids


def signal_marked(pgid: int, marker: str, sig: signal.Signals) -> set[int]:
    """Like :func:`signal_tree` for a call whose daemon is gone: only processes carrying
    ``marker``, their descendants, and the group ``pgid`` when a marked process is in it (a
    group id alone may have been reused since). Returns the pids signalled."""
    procs = list(_running())
    needle = f"{MARKER_VAR}={marker}".encode()
    marked = {p.pid for p in procs if _has_marker(p.pid, needle)}
    marked.discard(os.getpid())
    if any(p.pgid == pgid for p in procs if p.pid in marked):
        marked |= {p.pid for p in procs if p.pgid == pgid}
    found = _with_descendants(marked, procs)
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
    return found


def _with_descendants(found: set[int], procs: list[ProcInfo]) -> set[int]:
    children: dict[int, list[int]] = {}
    for proc in procs:
        children.setdefault(proc.ppid, []).append(proc.pid)
    pending = list(found)
    while pending:
        for child in children.get(pending.pop(), ()):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def tree_alive(pgid: int, marker: str) -> bool:
    """True while any process of the call is running (zombies do not count)."""
    if PROC.is_dir():
        return bool(tracked_pids(pgid, marker))
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _running() -> Iterator[ProcInfo]:
    try:
        names = [entry.name for entry in os.scandir(PROC) if entry.name.isdigit()]
    except OSError:
        return
    for name in names:
        try:
            fields = _read(f"{PROC}/{name}/stat").rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) < 20:
            continue
        if fields[0] not in (b"Z", b"X"):
            yield ProcInfo(int(name), int(fields[1]), int(fields[2]), int(fields[19]))


def _has_marker(pid: int, needle: bytes) -> bool:
    try:
        environ = _read(f"{PROC}/{pid}/environ")
    except OSError:
        return False
    return needle in environ and needle in environ.split(b"\0")


def _read(path: str) -> bytes:
    """The whole of a ``/proc`` file, read with plain system calls: a scan reads two files
    per process on the machine, where ``Path.open`` and its buffered reader cost several
    times the reads themselves."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = [os.read(fd, 65536)]
        while chunks[-1]:
            chunks.append(os.read(fd, 65536))
    finally:
        os.close(fd)
    return b"".join(chunks)
