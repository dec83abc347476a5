"""The control files a folder's trust covers, and their content pins (a format the daemon
checks and ``agentctl trust`` writes, kept in :mod:`agentd.protocol.trust_list`).

Trusting a folder pins each of its control paths (:data:`CONTROL_PATHS`) as it is then:

* ``.agentd.toml``: agentd's project settings, its hooks among them;
* ``.mcp.json``: MCP servers, programs agentd would start outside any sandbox;
* ``.agentd/hooks/``: the scripts hooks run; ``.agentd/commands/``: custom commands;
  ``.agentd/agents/``: subagent profiles; ``.agentd/skills/``: skills.

A file's pin is ``sha256:`` and the digest of its bytes; a folder's, the digest of its tree
(each entry's relative name and kind, a regular file's bytes, a symlink's target text and the
bytes of the regular file it names; subfolders walked without following links). A control
path that does not exist has no pin, so one that appears later matches nothing: its absence
is pinned too. A tree of more than :data:`MAX_TREE_FILES` entries or :data:`MAX_TREE_BYTES`
bytes, or a file that is not a regular one, cannot be pinned (pin None: never trusted).

Reads never block (``O_NONBLOCK``, regular files only, checked on the open descriptor) and
keep the bytes they hashed (:attr:`Snapshot.files`), so a caller uses exactly the content it
checked. Imports only the standard library and msgspec.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import msgspec

ControlKind = Literal["file", "folder"]
CONTROL_PATHS: tuple[tuple[str, ControlKind, str], ...] = (
    (".agentd.toml", "file", "project settings and hooks"),
    (".mcp.json", "file", "MCP servers (programs agentd starts)"),
    (".agentd/hooks", "folder", "scripts the hooks run"),
    (".agentd/commands", "folder", "custom commands"),
    (".agentd/agents", "folder", "subagent profiles"),
    (".agentd/skills", "folder", "skills"),
)
"""Each control path (relative to its folder), whether it is a file or a folder, and what it
holds (for the listings)."""
MAX_TREE_FILES = 500
MAX_TREE_BYTES = 16 * 1024 * 1024
MAX_FILE_BYTES = 4 * 1024 * 1024
_MAX_DEPTH = 8


class Snapshot(msgspec.Struct):
    """One control path as read: its ``pin`` (None when it cannot be pinned, see the module
    docstring) and the bytes of its regular files by relative name (``""`` for a file)."""

    path: Path
    pin: str | None
    files: dict[str, bytes] = msgspec.field(default_factory=dict)
    problem: str | None = None


class _TooLarge(Exception):
    """The tree passed a limit."""


def content_pin(data: bytes) -> str:
    """The pin of a file's content: ``sha256:`` and the hex digest."""
    import hashlib  # only when a control file is checked or trusted

    return "sha256:" + hashlib.sha256(data).hexdigest()


def owner_of(path: Path) -> Path:
    """The folder whose control path ``path`` is (``X/.mcp.json`` → ``X``, ``X/.agentd/agents``
    → ``X``)."""
    return path.parent.parent if path.parent.name == ".agentd" else path.parent


def control_paths(folder: Path) -> list[tuple[Path, ControlKind, str]]:
    """The control paths of ``folder`` (existing or not), with their kind and description."""
    return [(folder / name, kind, about) for name, kind, about in CONTROL_PATHS]


def kind_of(path: Path) -> ControlKind:
    """Whether the control path ``path`` is a file or a folder (by its name)."""
    return "folder" if path.parent.name == ".agentd" else "file"


def read_control(path: Path) -> Snapshot | None:
    """The control path ``path`` as it is now, or None when it does not exist."""
    if not os.path.lexists(path):
        return None
    if kind_of(path) == "file":
        try:
            data = read_regular(path, MAX_FILE_BYTES)
        except OSError as exc:
            return Snapshot(path, None, problem=exc.strerror or str(exc))
        return Snapshot(path, content_pin(data), {"": data})
    return _read_tree(path)


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (symlinks followed); OSError for anything else,
    an unreadable file or one larger than ``limit``. Never blocks on a FIFO or a device."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise OSError(f"{path} is larger than {limit // (1024 * 1024)} MiB")
    return data


def _read_tree(root: Path) -> Snapshot:
    import hashlib

    digest = hashlib.sha256()
    files: dict[str, bytes] = {}
    try:
        if not root.is_dir() or root.is_symlink():
            raise OSError(f"{root} is not a folder")
        _walk(root, "", digest.update, files, [0, 0], 0)
    except _TooLarge as exc:
        return Snapshot(root, None, problem=str(exc))
    except OSError as exc:
        return Snapshot(root, None, problem=exc.strerror or str(exc))
    return Snapshot(root, "sha256:" + digest.hexdigest(), files)


def _walk(
    folder: Path,
    prefix: str,
    update: Callable[[bytes], object],
    files: dict[str, bytes],
    count: list[int],
    depth: int,
) -> None:
    """Hash the entries of ``folder`` in name order (``count``: entries and bytes so far)."""
    with os.scandir(folder) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    for entry in entries:
        count[0] += 1
        if count[0] > MAX_TREE_FILES:
            raise _TooLarge(f"more than {MAX_TREE_FILES} entries")
        name = prefix + entry.name
        update(_field(name.encode("utf-8", "surrogateescape")))
        if entry.is_symlink():
            link = str(Path(entry.path).readlink())
            update(b"l" + _field(link.encode("utf-8", "surrogateescape")))
        if entry.is_dir(follow_symlinks=False):
            update(b"d")
            if depth < _MAX_DEPTH:
                _walk(Path(entry.path), name + "/", update, files, count, depth + 1)
            continue
        try:
            data = read_regular(Path(entry.path), MAX_FILE_BYTES)
        except OSError:
            update(b"o")  # a FIFO, a device, a dangling link, a folder link: its kind only
            continue
        count[1] += len(data)
        if count[1] > MAX_TREE_BYTES:
            raise _TooLarge(f"more than {MAX_TREE_BYTES // (1024 * 1024)} MiB")
        files[name] = data
        update(b"f" + _field(data))


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data
