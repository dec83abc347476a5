"""File helpers shared by read, write, edit and undo_edit.

- :func:`atomic_write`: temp file in the same directory, then ``os.replace``; an existing
  file's permission bits are kept, a new file gets ``0o666`` minus the umask. Readers never
  see a half-written file. (No fsync: a crash may lose the write, never tear it.)
- Read stamps: ``(mtime_ns, size)`` recorded in ``ctx.state["read"]`` when the model reads or
  writes a file; edit refuses when the file on disk no longer matches its stamp.
- Binary sniffing: a NUL byte in the first 8 KB means binary.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from agentd.tools.base import ToolContext, ToolError
from agentd.tools.files.safeopen import parent_dir, read_bytes

BINARY_SNIFF_BYTES = 8192
STAMPS_KEY = "read"

Stamp = tuple[int, int]


def looks_binary(data: bytes) -> bool:
    """True when the first 8 KB of ``data`` contain a NUL byte."""
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def stamp_of(path: Path) -> Stamp | None:
    """``(mtime_ns, size)`` of ``path``, or None when it does not exist."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return (info.st_mtime_ns, info.st_size)


def record_stamp(ctx: ToolContext, path: Path) -> None:
    """Remember the current stamp of ``path`` as "the model has seen this version"."""
    stamps: dict[str, Stamp | None] = ctx.state.setdefault(STAMPS_KEY, {})
    stamps[str(path)] = stamp_of(path)


def check_fresh(ctx: ToolContext, path: Path, shown: str) -> None:
    """Raise ToolError when ``path`` changed on disk since the model last read or wrote it.

    A file never read in this session passes (there is nothing to compare with).
    """
    stamps: dict[str, Stamp | None] = ctx.state.get(STAMPS_KEY, {})
    if str(path) not in stamps:
        return
    if stamps[str(path)] != stamp_of(path):
        raise ToolError(
            f"{shown} has changed on disk since you last read it. Read it again with the read "
            "tool, then redo the edit against its current content."
        )


def _umask() -> int:
    """The process umask, read without changing it (Linux), else the usual 022."""
    try:
        with Path("/proc/self/status").open(encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def atomic_write(path: Path, data: bytes, workspace: Path | None = None) -> None:
    """Replace ``path`` with ``data`` atomically, keeping an existing file's mode.

    Missing parent directories are created. With a ``workspace`` the temp file is created
    and renamed relative to a descriptor of the parent directory opened beneath it
    (:mod:`agentd.tools.files.safeopen`), so a directory swapped for a symlink meanwhile cannot
    redirect the write. On any failure the original file is untouched and the temp file is
    removed.
    """
    if workspace is not None:
        with parent_dir(path, workspace) as dir_fd:
            assert dir_fd is not None
            _write_in_dir(dir_fd, path.name, data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp_name = _new_temp(path)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            os.fchmod(tmp.fileno(), mode)
        Path(tmp_name).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp_name).unlink()
        raise


def _new_temp(path: Path) -> tuple[int, str]:
    """A new file beside ``path`` (mode 0600, created exclusively, as ``tempfile.mkstemp``
    makes one, without importing tempfile and the random and shutil it brings): its open
    descriptor and its name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        name = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def _write_in_dir(dir_fd: int, name: str, data: bytes) -> None:
    """:func:`atomic_write` relative to an open directory."""
    try:
        mode = stat.S_IMODE(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    temp = f".{name}.{os.urandom(6).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            os.fchmod(tmp.fileno(), mode)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise


def read_text_for_edit(path: Path, shown: str, workspace: Path | None = None) -> tuple[bytes, str]:
    """The file's bytes and text, decoded losslessly (undecodable bytes survive a round trip).

    Raises ToolError when the file is missing, a directory, or binary.
    """
    try:
        data = read_bytes(path, workspace)
    except FileNotFoundError:
        raise ToolError(f"{shown} does not exist. Use the write tool to create it.") from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a directory, not a file.") from None
    if looks_binary(data):
        raise ToolError(f"{shown} looks binary (it contains NUL bytes); it cannot be edited.")
    return data, data.decode("utf-8", "surrogateescape")


def encode_text(text: str) -> bytes:
    """The inverse of :func:`read_text_for_edit`."""
    return text.encode("utf-8", "surrogateescape")
