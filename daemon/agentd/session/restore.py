"""Putting files back for ``session/rewind``, beneath the session's workspace.

:class:`Restorer` holds a descriptor of the workspace root (the sandbox root, or the cwd of an
unsandboxed session) for one rewind and opens each file once, relative to it, with
``openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`` and ``O_NOFOLLOW`` (without openat2:
:func:`agentd.tools.files.safeopen.open_beneath`, a component-by-component ``O_NOFOLLOW``
walk): a path that leaves the root — through a folder swapped for a symlink too — or that is a
symlink is refused, never followed. On that one descriptor it reads the current content (to
compare with what the runs left), checks the file's real path for a control folder
(:func:`agentd.tools.files.protected.check_directory_fd`), and rewrites it in place when it is
a regular file with one name (it keeps its inode, mode and owner; a crash in the middle can
leave it part-written, and rewinding again with ``force`` finishes it). A missing file is
created, and a file with several names replaced, by a temp file and a rename
(:func:`agentd.tools.files.fileio.atomic_write`); a created file is removed through a
descriptor of its folder (:func:`agentd.tools.files.safeopen.parent_dir`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from types import TracebackType

import msgspec

from agentd.hardening import openat2_available, openat2_beneath
from agentd.protocol.rewind import ConflictReason, RewindConflict
from agentd.store.contents import ContentStore, digest_of
from agentd.tools.base import ToolError
from agentd.tools.files.fileio import atomic_write
from agentd.tools.files.protected import check_directory_fd
from agentd.tools.files.safeopen import open_beneath, parent_dir

_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_ESCAPES = (errno.EXDEV, errno.ELOOP)


class Restore(msgspec.Struct, frozen=True):
    """One file to put back: to ``target`` (a digest; None: remove it), from what the runs
    ``left`` there; ``kept`` false (with ``note``) when ``target``'s content was not kept."""

    path: str
    target: str | None
    left: str | None
    kept: bool
    note: str | None = None


class Outcome(msgspec.Struct):
    """The files a rewind restored, removed and left alone."""

    restored: list[str] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)
    conflicts: list[RewindConflict] = msgspec.field(default_factory=list)


def restore_all(
    plans: list[Restore], store: ContentStore, root: Path, force: bool, *, dry_run: bool = False
) -> Outcome:
    """Put each file of ``plans`` back beneath ``root`` (``force``: also files changed
    since; ``dry_run``: only say what would be done). Never raises for one file: a refusal or
    failure is a conflict."""
    outcome = Outcome()
    with Restorer(root, store, force=force, dry_run=dry_run) as restorer:
        for restore in plans:
            try:
                restorer.restore(restore, outcome)
            except ToolError as exc:
                outcome.conflicts.append(conflict(restore.path, "refused", str(exc)))
            except OSError as exc:
                message = f"could not be restored: {exc.strerror or exc}"
                outcome.conflicts.append(conflict(restore.path, "refused", message))
    return outcome


def conflict(path: str, reason: ConflictReason, message: str) -> RewindConflict:
    return RewindConflict(path=path, reason=reason, message=message)


class Restorer:
    """Restores files beneath ``root`` (see the module docstring); a context manager holding
    the root's descriptor."""

    def __init__(self, root: Path, store: ContentStore, *, force: bool, dry_run: bool) -> None:
        self.root = Path(os.path.realpath(root))
        self.store = store
        self.force = force
        self.dry_run = dry_run
        self._root_fd = -1
        self._beneath = False

    def __enter__(self) -> Restorer:
        self._root_fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self._beneath = openat2_available()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        os.close(self._root_fd)

    def restore(self, restore: Restore, out: Outcome) -> None:
        """Restore one file into ``out``; ToolError or OSError when refused or failed."""
        path = Path(restore.path)
        if not restore.kept:
            note = restore.note or "its earlier content was not kept"
            out.conflicts.append(conflict(restore.path, "not_restorable", note))
            return
        if path == self.root or not path.is_relative_to(self.root):
            raise ToolError(f"{path} is outside the workspace {self.root}; it is not restored")
        fd, writable = self._open(path)
        try:
            self._restore(restore, path, fd if writable else None, fd, out)
        finally:
            if fd is not None:
                os.close(fd)

    def _restore(
        self, restore: Restore, path: Path, write_fd: int | None, fd: int | None, out: Outcome
    ) -> None:
        """Compare, then restore or remove; ``write_fd`` is ``fd`` when opened for writing."""
        current = None if fd is None else digest_of(_read_all(fd))
        if current == restore.target:
            return
        if current != restore.left and not self.force:
            message = "changed since agentd left it; a forced rewind overwrites it"
            out.conflicts.append(conflict(restore.path, "changed", message))
            return
        if restore.target is None:
            if not self.dry_run:
                with parent_dir(path, self.root) as dir_fd, contextlib.suppress(FileNotFoundError):
                    os.unlink(path.name, dir_fd=dir_fd)
            out.removed.append(restore.path)
            return
        content = self.store.get(restore.target)
        if content is None:
            note = "its kept content is missing or damaged"
            out.conflicts.append(conflict(restore.path, "not_restorable", note))
            return
        if not self.dry_run:
            self._write(path, write_fd, content)
        out.restored.append(restore.path)

    def _write(self, path: Path, fd: int | None, content: bytes) -> None:
        """``content`` into ``path``: in place on ``fd`` when it may be (see the module
        docstring), else by a temp file and a rename."""
        if fd is not None:
            check_directory_fd(fd, path.name, self.root, str(path))
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                os.ftruncate(fd, 0)
                _write_all(fd, content)
                return
        atomic_write(path, content, self.root)

    def _open(self, path: Path) -> tuple[int | None, bool]:
        """``path`` opened beneath the root for reading and, when allowed, writing (the
        second value); None when it does not exist. ToolError when it leaves the root or is
        a symlink; PermissionError when it cannot be read."""
        try:
            return self._open_beneath(path, os.O_RDWR | _FLAGS), True
        except FileNotFoundError:
            return None, False
        except (PermissionError, IsADirectoryError):
            pass
        try:
            return self._open_beneath(path, os.O_RDONLY | _FLAGS), False
        except FileNotFoundError:
            return None, False

    def _open_beneath(self, path: Path, flags: int) -> int:
        if not self._beneath:
            return open_beneath(path, self.root, flags)
        try:
            return openat2_beneath(self._root_fd, str(path.relative_to(self.root)), flags, 0)
        except OSError as error:
            if error.errno in _ESCAPES:
                raise ToolError(
                    f"{path} leads outside the workspace {self.root} or is a symlink; it is "
                    "not restored"
                ) from None
            raise


def _read_all(fd: int) -> bytes:
    """The whole content of the open file ``fd`` (from its start)."""
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` at the start of ``fd``."""
    view = memoryview(data)
    offset = 0
    while offset < len(view):
        offset += os.pwrite(fd, view[offset:], offset)
