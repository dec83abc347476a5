"""Seeing which files a bash command created, changed or deleted: a stat snapshot of the
session's working tree before the command and one after.

The snapshot maps every regular file under the root (its real path) to ``(mtime_ns, size,
inode)``; symlinks are not followed and not listed. Folders that hold tools' caches or
other repositories' data (:data:`SKIPPED_DIRS`: ``.git``, ``node_modules``, virtualenvs,
caches) and the ``excluded`` paths (the daemon's own session store) are not entered, so
changes there are not seen. A tree with more than ``max_entries`` files and folders is not
snapshotted at all (None): the cost of a bash call stays bounded (a few milliseconds for
thousands of files), and the command's changes are then not recorded.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from pathlib import Path

Stat = tuple[int, int, int]
Snapshot = dict[str, Stat]

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
"""Folders never entered (VCS data, dependencies, caches)."""

MAX_ENTRIES = 5000
"""Files and folders a snapshot may hold; beyond, the tree is too large to watch."""


def snapshot(
    root: Path, excluded: Collection[str] = (), max_entries: int = MAX_ENTRIES
) -> Snapshot | None:
    """The regular files under ``root`` with their stats; None when the tree has more than
    ``max_entries`` entries (or ``root`` cannot be listed)."""
    found: Snapshot = {}
    pending = [str(root)]
    seen = 0
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as items:
                for item in items:
                    seen += 1
                    if seen > max_entries:
                        return None
                    _visit(item, found, pending, excluded)
        except OSError:
            if directory == str(root):
                return None
    return found


def _visit(
    item: os.DirEntry[str], found: Snapshot, pending: list[str], excluded: Collection[str]
) -> None:
    """Record ``item`` when it is a regular file; queue it when it is a folder to enter."""
    try:
        info = item.stat(follow_symlinks=False)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        if item.name not in SKIPPED_DIRS and item.path not in excluded:
            pending.append(item.path)
    elif stat.S_ISREG(info.st_mode):
        found[item.path] = (info.st_mtime_ns, info.st_size, info.st_ino)


def differences(before: Snapshot, after: Snapshot) -> tuple[list[str], list[str], list[str]]:
    """``(created, changed, deleted)`` paths between two snapshots, each sorted."""
    created = sorted(path for path in after if path not in before)
    changed = sorted(
        path for path, info in after.items() if path in before and before[path] != info
    )
    deleted = sorted(path for path in before if path not in after)
    return created, changed, deleted
