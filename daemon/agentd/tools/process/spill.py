"""Spill files: the full output of bash commands too big for a result, and their retention.

Layout: ``<root>/<session-id>/agentd-bash-XXXXXXXX.log``, where the daemon's root is
``$XDG_STATE_HOME/agentd/spill``. The root and each session directory are created ``0700``
(and tightened if they exist with a wider mode); files are ``0600``.

Retention, so spill files never pile up:

- per session, only the newest :data:`KEEP_PER_SESSION` files are kept: creating one more
  deletes the oldest (a result that names a deleted file is many calls old);
- ``session/delete`` deletes the session's directory (:func:`remove_session`);
- at daemon start (at most once an hour, :func:`prune_now_and_then`), session directories
  untouched for :data:`MAX_AGE_DAYS` days are deleted (:func:`prune`), which covers sessions
  deleted by hand and daemons that crashed.

A spill file holds at most :data:`SPILL_MAX_BYTES` (64 MiB, ``bash_spill_max_bytes``) of
output; a write error (a full disk) stops spilling with one warning (:class:`SpillWriter`).
With a ``redact`` function, secrets are replaced before anything reaches the file: output is
held back to the last line break (and from an unfinished private-key block; a line longer
than 64 KiB is cut keeping 8 KiB back) and redacted piece by piece, so a secret is not cut in
two.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, Self

from agentd.tools.defaults import SPILL_KEEP_PER_SESSION

KEEP_PER_SESSION = SPILL_KEEP_PER_SESSION
MAX_AGE_DAYS = 7.0
PRUNE_EVERY_SECONDS = 3600.0
PRUNE_STAMP = ".pruned"
PREFIX = "agentd-bash-"
SUFFIX = ".log"


def tmp_root() -> Path:
    """The folder holding every session's temp dir (``$TMPDIR/agentd-$UID-tmp``). A session's
    is deleted with the session (``session/delete``), and at daemon start those untouched for
    a week are (:func:`prune`), as spill files are. Here, not beside the Landlock code that
    makes the dirs, so the start-up prune does not load ctypes (some 3 MiB)."""
    return Path(os.environ.get("TMPDIR") or "/tmp") / f"agentd-{os.getuid()}-tmp"


def private_dir(path: Path) -> Path:
    """Create ``path`` ``0700`` (missing parents too; existing ones are left as they are) and
    tighten it to ``0700`` if it exists with a wider mode. PermissionError if another user
    owns it."""
    missing = [path, *(p for p in path.parents if not p.exists())]
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
    status = path.stat()
    if status.st_uid != os.getuid():
        raise PermissionError(f"{path} belongs to another user; refusing to spill into it")
    if status.st_mode & 0o077:
        path.chmod(0o700)
    return path


def fallback_dir() -> Path:
    """Where spill files go when a context names no spill directory (library use)."""
    import tempfile

    return Path(tempfile.gettempdir()) / f"agentd-spill-{os.getuid()}"


def open_spill(directory: Path, keep: int = KEEP_PER_SESSION) -> tuple[BinaryIO, Path]:
    """A new spill file in ``directory`` (created ``0700``), opened for writing, and its path.

    Deletes the oldest spill files there so that at most ``keep`` remain, this one included.
    """
    private_dir(directory)
    _keep_newest(directory, max(keep - 1, 0))
    import tempfile  # its import (random, hashlib) waits for the first spill file

    fd, name = tempfile.mkstemp(prefix=PREFIX, suffix=SUFFIX, dir=directory)
    return os.fdopen(fd, "wb"), Path(name)


class SpillWriter:
    """One spill file being written: at most ``max_bytes`` bytes, abandoned on the first error.

    :meth:`write` only queues the output: a worker thread redacts and writes it, so a slow or
    full disk never holds the event loop (:attr:`backlog` says how many bytes wait; the caller
    stops reading its source while it is large). :meth:`close` waits for the worker: call it
    off the event loop. Nothing raises: the first ``OSError`` (a full disk, a directory that
    cannot be created) is kept in :attr:`error`, logged once as a warning, and later output
    is dropped. :attr:`written` counts the output bytes the file holds (before redaction).
    """

    def __init__(
        self,
        handle: BinaryIO | None,
        path: Path | None,
        max_bytes: int,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.error: str | None = None
        self._accepted = 0
        self._saved = 0
        self._handle = handle
        self._redact = redact
        self._held = bytearray()
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._backlog = 0
        self._thread: threading.Thread | None = None
        self._closing = False

    @classmethod
    def open(
        cls, directory: Path, keep: int, max_bytes: int, redact: Callable[[str], str] | None = None
    ) -> Self:
        try:
            handle, path = open_spill(directory, keep)
        except OSError as exc:
            writer = cls(None, None, max_bytes)
            writer._fail(exc, directory)
            return writer
        return cls(handle, path, max_bytes, redact)

    @property
    def written(self) -> int:
        return self._saved if self.error else self._accepted

    @property
    def backlog(self) -> int:
        """Bytes queued and not yet written."""
        return self._backlog

    def write(self, data: bytes) -> None:
        """Queue output (never blocks); past ``max_bytes`` it is dropped."""
        if self._handle is None or self._closing:
            return
        room = self.max_bytes - self._accepted
        piece = data[:room] if len(data) > room else data
        self._accepted += len(piece)
        with self._lock:
            self._backlog += len(piece)
        self._enqueue(piece)
        if self._accepted >= self.max_bytes:
            self._finish()

    def _enqueue(self, piece: bytes) -> None:
        """Hand ``piece`` to the writing thread (this writer's own, started on first use)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._drain, name="spill", daemon=True)
            self._thread.start()
        self._queue.put(piece)

    def close(self) -> None:
        """Write what is queued, flush and close (idempotent; blocks: not on the event loop).
        A flush error counts as a write error."""
        self._finish()
        if self._thread is not None:
            self._thread.join()
        else:
            self._close_file()

    def _finish(self) -> None:
        if not self._closing:
            self._closing = True
            if self._thread is not None:
                self._queue.put(None)

    def _drain(self) -> None:
        while (piece := self._queue.get()) is not None:
            if self._handle is not None:
                self._put(piece)
            with self._lock:
                self._backlog -= len(piece)
        self._close_file()

    def _put(self, piece: bytes, final: bool = False) -> None:
        if self._redact is None:
            self._emit(piece)
            return
        self._held += piece
        cut = len(self._held) if final else _safe_cut(self._held)
        if cut:
            text = bytes(self._held[:cut]).decode("utf-8", "surrogateescape")
            del self._held[:cut]
            self._emit(self._redact(text).encode("utf-8", "surrogateescape"))

    def _emit(self, data: bytes) -> None:
        if self._handle is None or not data:
            return
        try:
            self._handle.write(data)
        except OSError as exc:
            self._fail(exc, self.path)

    def _close_file(self) -> None:
        if self._held and self._handle is not None:
            self._put(b"", final=True)
        handle, self._handle = self._handle, None
        if handle is None:
            return
        try:
            handle.close()
        except OSError as exc:
            self._fail(exc, self.path)

    def _fail(self, exc: OSError, where: Path | None) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()
        self._saved = _size(self.path) if self.path is not None else 0
        self.error = f"{exc.strerror or exc}"
        logging.getLogger("agentd.tools").warning(  # a JSON line through agentd.log
            "spill_stopped",
            extra={"path": str(where), "error": self.error, "saved_bytes": self._saved},
        )


_HOLD_LIMIT = 1 << 20
_LONG_LINE = 64 << 10
_OVERLAP = 8 << 10


def _safe_cut(held: bytearray) -> int:
    """How much of ``held`` can be redacted now: up to the last line break, and not into a
    private-key block still open (unless more than 1 MiB is held). Output without line
    breaks is cut once 64 KiB are held, keeping the last 8 KiB back (longer than any
    secret the detectors know), so memory stays bounded."""
    cut = held.rfind(b"\n") + 1
    begin = held.rfind(b"-----BEGIN", 0, cut)
    if begin >= 0 and held.find(b"-----END", begin, cut) < 0 and len(held) < _HOLD_LIMIT:
        cut = begin
    if cut == 0 and len(held) > _LONG_LINE:
        cut = len(held) - _OVERLAP
    return cut


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def remove_session(root: Path, session_id: str) -> None:
    """Delete the spill directory of ``session_id`` under ``root`` (nothing if absent)."""
    if session_id and "/" not in session_id and session_id not in (".", ".."):
        import shutil

        shutil.rmtree(root / session_id, ignore_errors=True)


def prune(root: Path, max_age_days: float = MAX_AGE_DAYS) -> int:
    """Delete session directories under ``root`` not modified for ``max_age_days`` days, and
    stray files as old; tighten ``root`` to ``0700``. Returns how many entries were deleted;
    never raises for OS errors (a missing ``root`` is fine)."""
    cutoff = time.time() - max_age_days * 86400
    removed = 0
    try:
        private_dir(root)
        entries = os.scandir(root)
    except OSError:
        return 0
    with entries:  # one entry at a time: a root may hold thousands of session folders
        for entry in entries:
            with contextlib.suppress(OSError):
                if (
                    entry.name == PRUNE_STAMP
                    or entry.stat(follow_symlinks=False).st_mtime >= cutoff
                ):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    import shutil

                    shutil.rmtree(entry.path)
                else:
                    Path(entry.path).unlink()
                removed += 1
    return removed


def prune_now_and_then(root: Path) -> int:
    """:func:`prune` at a daemon's start, unless ``root`` was pruned within the last
    :data:`PRUNE_EVERY_SECONDS` (its ``.pruned`` stamp says when): a week-old cutoff needs
    no scan at every one-shot run, and a busy machine's root holds thousands of folders
    (listing and stating 6,000 cost a one-shot some 3 MiB and its CPU)."""
    stamp = root / PRUNE_STAMP
    with contextlib.suppress(OSError):
        if time.time() - stamp.stat().st_mtime < PRUNE_EVERY_SECONDS:
            return 0
    removed = prune(root)
    with contextlib.suppress(OSError):
        stamp.touch(mode=0o600)
    return removed


def _keep_newest(directory: Path, keep: int) -> None:
    files: list[tuple[int, str]] = []
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(PREFIX) and entry.is_file(follow_symlinks=False):
                files.append((entry.stat().st_mtime_ns, entry.path))
    files.sort(reverse=True)
    for _, path in files[keep:]:
        with contextlib.suppress(OSError):
            Path(path).unlink()
