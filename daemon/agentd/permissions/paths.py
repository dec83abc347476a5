"""Path arguments as permission rules see them: normalised and symlink-resolved.

A path argument is seen two ways (:class:`PathView`): ``lexical`` (``~`` expanded, made
absolute against the session cwd, ``..`` collapsed, symlinks kept) and ``real`` (symlinks
resolved too, as :func:`os.path.realpath` would). A :class:`Resolver` serves one permission
check: it resolves each parent directory once, asks the kernel about each last component
once, and finds most names missing without raising (``faccessat``): a command naming forty
files costs forty cheap system calls plus one ``realpath`` per directory.
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

LISTING_LIMIT = 512
"""Entries read from one directory to learn which names are symlinks; past it, each name
is asked about on its own."""
_SPECIAL_NAMES = ("", ".", "..")
_LIST_FROM = 4
"""The number of names looked up in one directory before it is read as a whole."""


class PathView(NamedTuple):
    """One path argument: ``lexical`` and ``real`` absolute paths (module docstring)."""

    lexical: str
    real: str

    @classmethod
    def of(cls, raw: str, cwd: Path) -> PathView:
        """The views of ``raw`` relative to ``cwd`` (one-off; see :class:`Resolver`)."""
        return Resolver(cwd).view(raw)


class Resolver:
    """Resolves path arguments relative to ``cwd`` for one permission check (what it has
    resolved is kept for the rest of the check, never longer: files change between
    checks)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = str(cwd)
        # a plain name in the cwd (the usual argument) needs no split or normalisation:
        self._names_in_cwd = not self.cwd.endswith("/")
        self._lexical_cwd = os.path.normpath(self.cwd).rstrip("/")
        self._parents: dict[str, str] = {}
        self._views: dict[str, PathView] = {}
        self._lookups: dict[str, int] = {}
        self._symlinks: dict[str, frozenset[str] | None] = {}

    def view(self, raw: str) -> PathView:
        """The :class:`PathView` of ``raw``."""
        known = self._views.get(raw)
        if known is None:
            known = self._views[raw] = self._resolve(raw)
        return known

    def _resolve(self, raw: str) -> PathView:
        if self._names_in_cwd and "/" not in raw and raw not in _SPECIAL_NAMES and raw[:1] != "~":
            # a name of an entry of the cwd, as written: joined, not normalised
            return PathView(f"{self._lexical_cwd}/{raw}", self._real(self.cwd, raw))
        expanded = expand_user(raw)
        absolute = expanded if expanded.startswith("/") else f"{self.cwd}/{expanded}"
        head, tail = os.path.split(absolute)
        real = os.path.realpath(absolute) if tail in _SPECIAL_NAMES else self._real(head, tail)
        return PathView(os.path.normpath(absolute), real)

    def _real(self, head: str, tail: str) -> str:
        """``os.path.realpath(f"{head}/{tail}")`` for a name ``tail``: the parent is resolved
        (once per directory), then the name if it is a symlink."""
        parent = self._parents.get(head)
        if parent is None:
            parent = self._parents[head] = os.path.realpath(head)
        candidate = f"{parent.rstrip('/')}/{tail}"
        return os.path.realpath(candidate) if self._is_symlink(parent, tail) else candidate

    def _is_symlink(self, parent: str, name: str) -> bool:
        """Whether ``parent/name`` is a symlink (``parent`` is resolved)."""
        symlinks = self._symlinks.get(parent)
        if symlinks is not None:
            return name in symlinks
        if parent not in self._symlinks:
            count = self._lookups[parent] = self._lookups.get(parent, 0) + 1
            if count >= _LIST_FROM:
                symlinks = self._symlinks[parent] = _listed_symlinks(parent)
                if symlinks is not None:
                    return name in symlinks
        return _is_symlink(f"{parent.rstrip('/')}/{name}")


def _listed_symlinks(folder: str) -> frozenset[str] | None:
    """The names of the symlinks in ``folder``; None when it cannot be read or holds more
    than :data:`LISTING_LIMIT` entries."""
    found: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= LISTING_LIMIT:
                    return None
                if entry.is_symlink():
                    found.append(entry.name)
    except (OSError, ValueError):
        return None
    return frozenset(found)


def _is_symlink(path: str) -> bool:
    """Whether ``path`` is a symbolic link (False when it is missing or cannot be named)."""
    try:
        if not os.access(path, os.F_OK, effective_ids=True, follow_symlinks=False):
            return False  # missing: most argument words name nothing
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):  # a name too long or with NUL: not a link
        return False


def expand_user(raw: str) -> str:
    """``raw`` with a leading ``~`` expanded (kept as written when it cannot be)."""
    try:
        return str(Path(raw).expanduser()) if raw.startswith("~") else raw
    except RuntimeError:
        return raw


@lru_cache(maxsize=64)
def real_root(cwd: str) -> str:
    """The session cwd resolved (it does not change while a session lives)."""
    return os.path.realpath(cwd)


def relative(path: str, root: str) -> str:
    """``path`` relative to ``root`` when inside it (``.`` for the root), else ``path``."""
    if path == root:
        return "."
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both absolute and normalised)."""
    return path == root or path.startswith(root.rstrip("/") + "/")
