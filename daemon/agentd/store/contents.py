"""File contents kept for ``session/rewind``: content-addressed files beside the session file.

A run's before-images (what a file held before the run first changed it) are written to
``<session file without .jsonl>.files/<sha256>`` — directory 0700, files 0600, each content
once however many files or runs held it. Writes go through a temp file and a rename, so a
reader never sees half a content; they are not fsynced (a crash may lose a content whose
entry survived: the rewind then reports that file as not restorable, never writes a wrong
one, because :meth:`ContentStore.get` checks the digest). :func:`remove` deletes them with
the session.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def contents_dir(session_path: Path) -> Path:
    """Where the kept file contents of the session file ``session_path`` live."""
    return session_path.with_suffix(".files")


def digest_of(data: bytes) -> str:
    """The SHA-256 hex digest that names ``data``."""
    import hashlib  # on first use: it loads OpenSSL's libcrypto, which a start does not need

    return hashlib.sha256(data).hexdigest()


class ContentStore:
    """The kept contents of one session. Synchronous file I/O; not thread-safe per digest
    beyond what the temp-file-and-rename gives (two writers of one digest write the same
    bytes)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._size: int | None = None

    def size(self) -> int:
        """Bytes kept so far (the directory is summed once, then tracked)."""
        if self._size is None:
            total = 0
            with contextlib.suppress(FileNotFoundError), os.scandir(self.directory) as items:
                for item in items:
                    with contextlib.suppress(OSError):
                        total += item.stat(follow_symlinks=False).st_size
            self._size = total
        return self._size

    def has(self, digest: str) -> bool:
        return (self.directory / digest).exists()

    def put(self, data: bytes, digest: str) -> int:
        """Keep ``data`` under ``digest`` (its :func:`digest_of`); return the bytes added
        (0 when that content was already kept). Raises OSError when it cannot be written."""
        target = self.directory / digest
        if target.exists():
            return 0
        kept = self.size()
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = self.directory / f".{digest}.{os.getpid()}.tmp"
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            partial.replace(target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
        self._size = kept + len(data)
        return len(data)

    def get(self, digest: str) -> bytes | None:
        """The content kept under ``digest``; None when it is missing or damaged."""
        try:
            data = (self.directory / digest).read_bytes()
        except OSError:
            return None
        return data if digest_of(data) == digest else None


def remove(session_path: Path) -> None:
    """Delete the kept contents of a deleted session (nothing when it has none)."""
    import shutil  # only when a session is deleted

    shutil.rmtree(contents_dir(session_path), ignore_errors=True)
