"""Low-level writes of a session file: creating it durably, claiming its id, appending
whole buffers, reopening for append, and the error a failed write becomes."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import msgspec

from agentd.errors import SessionExists, StoreWriteFailed
from agentd.protocol.session_file import SessionHeader
from agentd.store.lock import open_locked
from agentd.store.paths import iter_session_files, session_id_of
from agentd.store.reader import fsync_directory

_ENCODER = msgspec.json.Encoder()


def write_failed(path: Path, exc: OSError) -> StoreWriteFailed:
    reason = exc.strerror or str(exc)
    prefix = "disk full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "write failed"
    return StoreWriteFailed(
        f"{prefix}: could not write the session file {path} ({reason}); it holds everything "
        "up to the last entry saved before this",
        {"path": str(path), "errno": exc.errno},
    )


def open_append(path: Path, session_id: str, locked: bool) -> int:
    if locked:
        return open_locked(path, session_id)
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)


def same_file(path: Path, fd: int, session_id: str) -> int:
    """``fd`` if it still refers to ``path`` (a migration rewrites the file and renames the
    new one over it), else a locked descriptor of the new file."""
    if os.fstat(fd).st_ino == path.stat().st_ino:
        return fd
    os.close(fd)
    return open_locked(path, session_id)


def create_file(path: Path, header: SessionHeader, *, durable: bool = True) -> int:
    """Create ``path`` (private, must not exist) holding ``header``, durably unless told not
    to (then the caller fsyncs file and folder later); return its append descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    try:
        write_all(fd, _ENCODER.encode(header) + b"\n")
        if durable:
            os.fsync(fd)
            fsync_directory(path.parent)
    except BaseException:
        os.close(fd)
        raise
    return fd


def claim(root: Path, path: Path, fd: int) -> None:
    """Keep the just-created ``path`` only if it is the one file of its session id under
    ``root``; otherwise remove it and raise :class:`SessionExists`. Every creator checks
    after creating, so of two racing creators at least one sees the other's file."""
    session_id = session_id_of(path.name) or ""
    if all(other == path for other in iter_session_files(root, session_id)):
        return
    os.close(fd)
    path.unlink(missing_ok=True)
    fsync_directory(path.parent)
    raise SessionExists(f"session {session_id!r} already exists")


def write_all(fd: int, data: bytes) -> None:
    """One ``write()`` for the whole buffer; more only if the kernel took part of it."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
