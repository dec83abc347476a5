"""Low-level writes of a session file: creating it durably, claiming its id, appending
whole buffers (:class:`AppendOnly`, the writing half of a ``SessionFile``), reopening for
append, and the error a failed write becomes."""

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


class AppendOnly:
    """Appends to one session file through its ``O_APPEND`` descriptor: whole buffers or
    nothing (see :meth:`_write`), fsync on :meth:`sync`. The state is set up by
    ``SessionFile.__init__``."""

    path: Path
    header: SessionHeader
    _fd: int | None
    _locked: bool
    _size: int
    _truncate_to: int | None
    _unsynced: bool
    _folder_unsynced: bool

    def sync(self) -> None:
        """fsync what was appended since the last sync (no-op when nothing was).

        Raises :class:`StoreWriteFailed` when the fsync fails. May run in a worker thread
        while the owner appends (nothing else may run concurrently, :meth:`close` included).
        """
        if self._fd is not None and self._unsynced:
            self._unsynced = False  # first: an append during the fsync (another thread) counts
            try:
                os.fsync(self._fd)
                if self._folder_unsynced:
                    fsync_directory(self.path.parent)
                    self._folder_unsynced = False
            except OSError as exc:
                self._unsynced = True
                raise write_failed(self.path, exc) from exc

    def _write(self, data: bytes) -> int:
        """Append ``data`` whole, or not at all, and return the offset it begins at: on a
        failed write the file is cut back to the end of its last complete entry and
        :class:`StoreWriteFailed` is raised (the caller leaves the entry out of the tree)."""
        if self._fd is None:
            self._fd = open_append(self.path, self.header.id, self._locked)
        if self._truncate_to is not None:
            os.ftruncate(self._fd, self._truncate_to)
            self._truncate_to = None
        self._size = os.fstat(self._fd).st_size
        try:
            self._write_all(self._fd, data)
        except OSError as exc:
            self._cut_back()
            raise write_failed(self.path, exc) from exc
        offset = self._size
        self._size += len(data)
        self._unsynced = True
        return offset

    def _write_all(self, fd: int, data: bytes) -> None:
        """The raw append (a seam for fault-injection tests: a subclass may fail it)."""
        write_all(fd, data)

    def _cut_back(self) -> None:
        """Truncate a half-written entry away; if even that fails, close the descriptor and
        truncate when the file is next written."""
        assert self._fd is not None
        try:
            os.ftruncate(self._fd, self._size)
        except OSError:
            self._truncate_to = self._size
