"""One writer per session file: an exclusive ``flock`` held while a session is loaded.

:func:`open_locked` opens a session file for appending and takes ``LOCK_EX | LOCK_NB`` on it;
when another process holds the lock it raises :class:`~agentd.errors.SessionLocked` naming
that process (``data: {"pid": …}``), found in ``/proc/locks`` by the file's inode (Linux; the
message says "another process" where that is not available). The lock belongs to the open
file description, so it lasts until the descriptor is closed (:meth:`SessionFile.close`) or
the process dies: a killed daemon never leaves a stale lock behind. Readers (listing, export)
never lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from agentd.errors import SessionLocked

PROC_LOCKS = Path("/proc/locks")


def open_locked(path: Path, session_id: str) -> int:
    """An ``O_APPEND`` descriptor of ``path`` holding its exclusive lock (see the module
    docstring); raises SessionLocked, or OSError when the file cannot be opened."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    try:
        take_lock(fd, path, session_id)
    except BaseException:
        os.close(fd)
        raise
    return fd


def take_lock(fd: int, path: Path, session_id: str) -> None:
    """Take the exclusive lock of the open ``fd`` (of ``path``) or raise SessionLocked."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        status = os.fstat(fd)
        pid = holder_pid(status.st_dev, status.st_ino)
        who = f"process {pid}" if pid else "another process"
        if pid == os.getpid():
            who = "this daemon"
        raise SessionLocked(
            f"session {session_id!r} is loaded by {who} (another agentd daemon?): its file "
            f"{path} is locked; use that daemon, or stop it and try again",
            {"pid": pid, "path": str(path)},
        ) from None


def holder_pid(device: int, inode: int) -> int | None:
    """The pid of a process holding a ``flock`` on the file ``(device, inode)``, if listed."""
    key = f"{os.major(device):02x}:{os.minor(device):02x}:{inode}"
    with contextlib.suppress(OSError, ValueError):
        for line in PROC_LOCKS.read_text().splitlines():
            fields = line.split()
            if "->" in fields:  # a waiter, not a holder
                continue
            if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == key:
                return int(fields[4])
    return None
