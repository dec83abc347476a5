"""Reading instruction files a repository may control (``system_prompt_file``, ``AGENTS.md``)
without letting them stall or bloat the daemon, and finding a project's ``.agentd/<kind>``
folder (:func:`project_folder`: its agent profiles, its custom commands).

:func:`read_capped_text` (and :func:`read_capped_bytes`, for files parsed rather than shown:
a project's ``.agentd.toml``, agent profiles) opens with ``O_NONBLOCK`` (a FIFO or a device
never blocks the open), checks the open descriptor with ``fstat`` (only a regular file is
read: no swap between a check and the open), and reads at most :data:`MAX_TEXT_BYTES`; a
longer file is cut there with a note saying so. Imports only the standard library.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

MAX_TEXT_BYTES = 64 * 1024
"""Cap of one instruction file (each AGENTS.md, CLAUDE.md and the ``system_prompt_file``)."""


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a socket or a directory: it is not read."""


def read_capped_text(path: Path, limit: int = MAX_TEXT_BYTES) -> str:
    """The first ``limit`` bytes of the regular file ``path`` as UTF-8 (undecodable bytes
    replaced), followed by ``[… NAME truncated at N KB]`` when the file is longer.

    Raises :class:`NotRegularFile` for anything but a regular file (symlinks are followed) and
    OSError when it cannot be opened. Never blocks on a FIFO or a device.
    """
    data = read_capped_bytes(path, limit)
    text = data[:limit].decode("utf-8", "replace")
    if len(data) > limit:
        text += f"\n[… {path.name} truncated at {limit // 1024} KB]"
    return text


def read_capped_bytes(path: Path, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the regular file ``path`` (more than ``limit``: the file
    is longer). :class:`NotRegularFile` for anything but a regular file, OSError when it
    cannot be opened; never blocks on a FIFO or a device."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"{path} is not a regular file ({_kind(mode)})")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read(limit + 1)
    finally:
        os.close(fd)


def pinned_entries(
    paths: list[Path], files: Mapping[str, bytes], what: str, warnings: list[str]
) -> list[Path]:
    """The entries of a pinned project folder whose bytes its trust snapshot (``files``) holds;
    each other one (pinned by its kind only: a FIFO, a device) is named in ``warnings`` as an
    ignored ``what``."""
    kept = []
    for path in paths:
        if path.name in files:
            kept.append(path)
        else:
            warnings.append(f"ignored {what} {path}: {unread_reason(path)}")
    return kept


def unread_reason(path: Path) -> str:
    """Why a pinned folder's entry ``path`` has no bytes in its trust snapshot (the pin keeps
    only the kind of a FIFO, a device or a link to one), without ever blocking on it."""
    try:
        read_capped_bytes(path, 0)
    except OSError as exc:
        return exc.strerror or str(exc)
    return "it changed after its folder was checked"


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def project_folder(cwd: Path, env: Mapping[str, str], kind: str) -> Path | None:
    """The nearest ``.agentd/<kind>`` folder at or above ``cwd``, stopping at the repository
    root (a folder holding ``.git``) and below ``$HOME``."""
    home = Path(os.path.realpath(env.get("HOME") or Path.home()))
    directory = Path(os.path.realpath(cwd))
    while directory != home and directory.parent != directory:
        candidate = directory / ".agentd" / kind
        if candidate.is_dir():
            return candidate
        if (directory / ".git").exists():
            return None
        directory = directory.parent
    return None
