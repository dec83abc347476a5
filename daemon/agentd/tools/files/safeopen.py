"""Opening files inside the workspace so that the check *is* the open.

:func:`resolve_path` checks a path, but a command running meanwhile could swap a directory
for a symlink before the file is opened. With a workspace set, every open here therefore goes
through a directory descriptor of the workspace root and
``openat2(…, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`` (Linux 5.6+): the kernel refuses any
resolution that leaves the root, whatever changes on disk. Without openat2, the path is
walked one component at a time with ``O_NOFOLLOW`` (a symlink anywhere is refused). Writes
create the temp file and rename it relative to a descriptor of the parent directory, so the
file lands in the directory that was checked.

Without a workspace (``sandbox = "none"``) these are plain opens. With one, reading a regular
file with several hard links is refused (:func:`open_read`).

Directory walks (grep's Python backend, find, ls) open their start with :func:`open_beneath`
and every entry below it with :func:`open_child`: relative to the descriptor of the directory
it was listed in, with ``O_NOFOLLOW``. A path string is never resolved again, so a folder
swapped for a symlink during the walk is skipped, never followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from agentd.hardening import openat2_available
from agentd.hardening import openat2_beneath as _openat2
from agentd.tools.base import ToolError
from agentd.tools.files.protected import check_directory_fd

_ESCAPES = (errno.EXDEV, errno.ELOOP, errno.ENOTDIR)


def _walk(dir_fd: int, relative: str, flags: int, mode: int) -> int:
    """The fallback: each component opened with ``O_NOFOLLOW`` below the previous one."""
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise OSError(errno.EXDEV, "the path leaves the workspace", relative)
    current = os.dup(dir_fd)
    try:
        for part in parts[:-1]:
            following = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=current)
            os.close(current)
            current = following
        last = parts[-1] if parts else "."
        return os.open(last, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=current)
    finally:
        os.close(current)


def open_beneath(path: Path, workspace: Path | None, flags: int, mode: int = 0o666) -> int:
    """A descriptor for ``path`` (absolute), opened without leaving ``workspace``.

    Raises ToolError when the path leaves the workspace at the time of the open, OSError for
    ordinary failures (missing file…).
    """
    if workspace is None:
        return os.open(path, flags | os.O_CLOEXEC, mode)
    root = Path(os.path.realpath(workspace))
    if not (path == root or path.is_relative_to(root)):
        raise _escaped(path, root)
    relative = str(path.relative_to(root)) if path != root else "."
    root_fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        opener = _openat2 if openat2_available() else _walk
        return opener(root_fd, relative, flags, mode)
    except OSError as error:
        if error.errno in _ESCAPES and not _is_plain_notdir(error, path):
            raise _escaped(path, root) from None
        raise
    finally:
        os.close(root_fd)


def _is_plain_notdir(error: OSError, path: Path) -> bool:
    """ENOTDIR because a parent really is a file (not a swapped symlink)."""
    return error.errno == errno.ENOTDIR and not any(p.is_symlink() for p in path.parents)


def _escaped(path: Path, root: Path) -> ToolError:
    return ToolError(
        f"{path} leads outside the workspace {root} (through a symlink or a directory that "
        "changed while it was opened). This session is sandboxed to the workspace."
    )


def open_child(dir_fd: int, name: str, *, directory: bool) -> int | None:
    """``name`` in the directory ``dir_fd``, opened without following a symlink: a directory
    (``directory``) for listing, or a regular file for reading (non-blocking, so a FIFO
    swapped in cannot hang the walk). None when it is gone, a symlink, of another kind, or
    unreadable."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    flags |= os.O_DIRECTORY if directory else os.O_NONBLOCK
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return None
    if directory:
        return fd
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    if not regular:
        os.close(fd)
        return None
    return fd


def open_read(path: Path, workspace: Path | None) -> BinaryIO:
    """``path`` opened for reading in binary mode (see :func:`open_beneath`). With a
    workspace, a regular file with more than one hard link is refused (ToolError): another
    name of the same file may lie outside the workspace, and which one cannot be found
    cheaply. Checked on the open descriptor, so a link made after a check cannot slip by."""
    fd = open_beneath(path, workspace, os.O_RDONLY)
    if workspace is not None:
        try:
            links = _extra_links(fd)
        except BaseException:
            os.close(fd)
            raise
        if links:
            os.close(fd)
            raise ToolError(
                f"{path} has {links + 1} hard links: the same file also has a name that may "
                "be outside the workspace, so this sandboxed session does not read it with "
                "the file tools. If it belongs to the project, make it a file of its own "
                "(e.g. `cp --remove-destination` over it, with the user's approval)."
            )
    return os.fdopen(fd, "rb")


def _extra_links(fd: int) -> int:
    """How many more names than one the regular file ``fd`` has (0 for other kinds)."""
    info = os.fstat(fd)
    return info.st_nlink - 1 if stat.S_ISREG(info.st_mode) and info.st_nlink > 1 else 0


def read_bytes(path: Path, workspace: Path | None) -> bytes:
    """The whole content of ``path`` (see :func:`open_beneath`)."""
    with open_read(path, workspace) as file:
        return file.read()


@contextlib.contextmanager
def parent_dir(path: Path, workspace: Path | None) -> Iterator[int | None]:
    """A descriptor of ``path``'s parent directory opened beneath ``workspace``, created
    when missing (None without a workspace: callers use plain paths). It is for changing
    ``path``: ToolError when that would change a control file
    (:mod:`agentd.tools.files.protected`)."""
    if workspace is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield None
        return
    make_dirs_beneath(path.parent, workspace)
    fd = open_beneath(path.parent, workspace, os.O_PATH | os.O_DIRECTORY)
    try:
        check_directory_fd(fd, path.name, workspace, str(path))
        yield fd
    finally:
        os.close(fd)


def make_dirs_beneath(directory: Path, workspace: Path) -> None:
    """``mkdir -p`` of ``directory``, each level created relative to a descriptor of the
    level above, opened beneath ``workspace``; a control folder is never created
    (ToolError, see :mod:`agentd.tools.files.protected`)."""
    root = Path(os.path.realpath(workspace))
    if directory == root:
        return
    missing: list[Path] = []
    probe = directory
    while probe != root and not probe.exists():
        missing.append(probe)
        probe = probe.parent
    for level in reversed(missing):
        fd = open_beneath(level.parent, workspace, os.O_PATH | os.O_DIRECTORY)
        try:
            check_directory_fd(fd, level.name, workspace, str(level))
            os.mkdir(level.name, dir_fd=fd)
        except FileExistsError:
            pass
        finally:
            os.close(fd)
