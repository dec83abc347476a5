"""Seeing which files a bash command created, changed or deleted in the session's working tree.

A :class:`Tree` keeps what it last saw of the tree: every regular file under the root (its
path) with ``(mtime_ns, size, inode)`` and every folder with its entries. :meth:`Tree.refresh`
brings that up to date and returns what changed since the previous refresh, so the recorder
refreshes once before a command (what changed since is not the command's) and once after.
Symlinks are not followed and not listed. Folders that hold tools' caches or other
repositories' data (:data:`SKIPPED_DIRS`: ``.git``, ``node_modules``, virtualenvs, caches) and
the ``excluded`` paths (the daemon's own session store) are not entered, so changes there are
not seen. A tree of more than ``max_entries`` files and folders is not watched (``refresh``
answers None; the tree is tried again once its root folder changes).

How a refresh finds the changes:

* **With inotify** (:mod:`agentd.session.inotify`): each folder is watched (the watch is added
  before the folder is listed, so nothing slips between), and a refresh looks only at the
  entries the events name. A command that changed nothing costs one ``read`` of the event
  queue; one that changed a file, one ``lstat``. A lost event queue (overflow) compares the
  whole tree again.
* **Without** (or ``events`` None): one ``lstat`` per folder, a folder listed again only when
  its ``(mtime_ns, inode)`` moved (an entry created, deleted or renamed in it) or it had
  changed within :data:`RACY_NS` of being listed (a change in the same timestamp tick as the
  listing); and one ``lstat`` per file, since writing a file does not touch its folder. A
  file rewritten in place with the same size is seen by its ``mtime_ns``. Not seen: a
  rewrite that keeps the size and sets the old mtime back, or one of the same size within the
  same timestamp tick (a few ms on local file systems) as the previous refresh.
"""

# str paths, not Path: a refresh handles thousands of them, and Path objects cost several times more
# ruff: noqa: PTH112, PTH118, PTH119, PTH120, PTH208

from __future__ import annotations

import os
import stat
import threading
import time
import weakref
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from agentd.session.inotify import Inotify, Listener

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
"""Files and folders a tree compared by stats may hold; beyond, it is too large to watch."""

MAX_WATCHED_ENTRIES = 50_000
"""The same limit for a tree watched with inotify (a refresh costs what changed, not the
tree's size)."""

RACY_NS = 1_000_000_000
"""A folder changed this close to its listing is listed again at the next refresh."""


class Changes(NamedTuple):
    """The paths a refresh found created, changed and deleted, each sorted."""

    created: list[str]
    changed: list[str]
    deleted: list[str]

    @property
    def any(self) -> bool:
        return bool(self.created or self.changed or self.deleted)


class _Dir:
    __slots__ = ("files", "key", "listed_ns", "subdirs")

    def __init__(self, key: tuple[int, int], listed_ns: int) -> None:
        self.key, self.listed_ns = key, listed_ns
        self.files: set[str] = set()
        self.subdirs: set[str] = set()

    def racy(self) -> bool:
        return self.key[0] + RACY_NS > self.listed_ns


class _Found:
    """The changes one refresh collects."""

    def __init__(self) -> None:
        self.created: list[str] = []
        self.changed: list[str] = []
        self.deleted: list[str] = []

    def sorted(self) -> Changes:
        """The changes, each path once: one deleted and created again (its folder replaced)
        counts as changed."""
        created, deleted = set(self.created), set(self.deleted)
        again = created & deleted
        changed = (set(self.changed) | again) - (created - again)
        return Changes(sorted(created - again), sorted(changed), sorted(deleted - again))


class Tree:
    """What was last seen of the tree under ``root`` (see the module docstring). Thread-safe:
    refreshes are serialised."""

    def __init__(
        self,
        root: Path,
        excluded: Collection[str] = (),
        max_entries: int | None = None,
        events: Inotify | None = None,
    ) -> None:
        self.root = str(root)
        self.excluded = frozenset(excluded)
        self.events = events
        default = MAX_ENTRIES if events is None else MAX_WATCHED_ENTRIES
        self.max_entries = default if max_entries is None else max_entries
        self._lock = threading.Lock()
        self._files: Snapshot = {}
        self._dirs: dict[str, _Dir] = {}
        self._ready = False
        self._large: tuple[int, int] | None = None
        self._listener: Listener | None = None
        self.rescans = 0
        """Times events were lost and the whole tree was listed again."""
        if events is not None:
            self._listener = events.register()
            weakref.finalize(self, events.release_later, self._listener)

    def refresh(self) -> Changes | None:
        """What changed since the previous refresh (nothing at the first); None when the tree
        is too large or its root cannot be listed."""
        with self._lock:
            if not self._ready:
                return Changes([], [], []) if self._start() else None
            found = _Found()
            if self.events is None:
                self._compare(found)
            else:
                self._apply(found)
                if self.events is None:  # a watch was refused meanwhile
                    self._compare(found)
            if self._over() or not self._ready:
                self._reset(too_large=self._over())
                return None
            return found.sorted()

    def _over(self) -> bool:
        return len(self._files) + len(self._dirs) > self.max_entries

    @property
    def files(self) -> Snapshot:
        """The files as last seen (a copy)."""
        with self._lock:
            return dict(self._files)

    def _start(self) -> bool:
        """The first look at the tree: everything listed, nothing reported."""
        if self._large is not None and self._large == _key(self.root):
            return False
        self._ready = self._scan(self.root, None) and os.path.isdir(self.root)
        if not self._ready:
            self._reset(too_large=self._over())
        return self._ready

    def _reset(self, *, too_large: bool) -> None:
        if self.events is not None and self._listener is not None:
            self.events.clear(self._listener)
        self._files, self._dirs, self._ready = {}, {}, False
        self._large = _key(self.root) if too_large else None

    def _scan(self, top: str, found: _Found | None) -> bool:
        """List ``top`` and everything beneath it (each file reported created to ``found``);
        False when the tree grew past its limit."""
        pending = [top]
        while pending:
            directory = pending.pop()
            listener = self._listener
            if self.events is not None and listener and not self.events.watch(listener, directory):
                self._by_stats()
            key = _key(directory)
            if key is None:
                continue
            entry = self._dirs[directory] = _Dir(key, time.time_ns())
            try:
                names = os.listdir(directory)
            except OSError:
                if directory == self.root:
                    return False
                continue
            for name in names:
                kind = self._place(directory, entry, name)
                if kind == "dir":
                    pending.append(os.path.join(directory, name))
                elif kind == "file" and found is not None:
                    found.created.append(os.path.join(directory, name))
            if self._over():
                return False
        return True

    def _by_stats(self) -> None:
        """inotify refused a watch: this tree compares stats from now on (what was listed
        so far is current, so nothing is lost), with the smaller limit unless one was given."""
        if self.events is not None and self._listener is not None:
            self.events.release(self._listener)
        self.events = self._listener = None
        if self.max_entries == MAX_WATCHED_ENTRIES:
            self.max_entries = MAX_ENTRIES

    def _place(self, directory: str, entry: _Dir, name: str) -> str | None:
        """Note the entry ``name`` of ``directory``: "file", "dir" (to enter) or None."""
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
        except OSError:
            return None
        if stat.S_ISDIR(info.st_mode):
            if not self._enters(name, path):
                return None
            entry.subdirs.add(name)
            return "dir"
        if stat.S_ISREG(info.st_mode):
            entry.files.add(name)
            self._files[path] = (info.st_mtime_ns, info.st_size, info.st_ino)
            return "file"
        return None

    def _apply(self, found: _Found) -> None:
        """Bring the tree up to date from the inotify events queued since the last refresh."""
        assert self.events is not None
        assert self._listener is not None
        events, overflowed = self.events.drain(self._listener)
        if overflowed:
            self._rescan(found)
            return
        for directory, name in dict.fromkeys(events):
            if name:
                self._check(directory, name, found)
            elif directory == self.root and not os.path.isdir(self.root):
                self._ready = False
                return

    def _compare(self, found: _Found) -> None:
        """Bring the tree up to date by stats: folders whose key moved listed again, every
        file's stat compared."""
        for directory in list(self._dirs):
            entry = self._dirs.get(directory)
            key = _key(directory)
            if entry is None or key is None:
                if directory == self.root:
                    self._ready = False
                    return
                continue
            if key != entry.key or entry.racy():
                self._relist(directory, entry, key, found)
        for path, before in list(self._files.items()):
            now = _file_stat(path)
            if now is None:
                self._check(os.path.dirname(path), os.path.basename(path), found)
            elif now != before:
                self._files[path] = now
                found.changed.append(path)

    def _relist(self, directory: str, entry: _Dir, key: tuple[int, int], found: _Found) -> None:
        entry.key, entry.listed_ns = key, time.time_ns()
        try:
            names = set(os.listdir(directory))
        except OSError:
            return
        for name in names | entry.files | entry.subdirs:
            self._check(directory, name, found)

    def _check(self, directory: str, name: str, found: _Found) -> None:
        """Compare the entry ``name`` of ``directory`` with what was seen of it."""
        entry = self._dirs.get(directory)
        if entry is None:
            return
        path = os.path.join(directory, name)
        try:
            info: os.stat_result | None = os.lstat(path)
        except OSError:
            info = None
        is_dir = info is not None and stat.S_ISDIR(info.st_mode)
        is_file = info is not None and stat.S_ISREG(info.st_mode)
        if name in entry.subdirs and not (is_dir and info is not None and self._same(path, info)):
            entry.subdirs.discard(name)
            self._drop(path, found)
        if name in entry.files and not is_file:
            entry.files.discard(name)
            del self._files[path]
            found.deleted.append(path)
        if is_file and info is not None:
            now = (info.st_mtime_ns, info.st_size, info.st_ino)
            before = self._files.get(path)
            entry.files.add(name)
            self._files[path] = now
            if before is None:
                found.created.append(path)
            elif before != now:
                found.changed.append(path)
        elif is_dir and name not in entry.subdirs and self._enters(name, path):
            entry.subdirs.add(name)
            self._scan(path, found)

    def _enters(self, name: str, path: str) -> bool:
        """Whether the folder ``name`` at ``path`` is watched (not skipped, not excluded)."""
        return name not in SKIPPED_DIRS and path not in self.excluded

    def _same(self, path: str, info: os.stat_result) -> bool:
        """Whether the folder at ``path`` is still the one seen there (the same inode)."""
        entry = self._dirs.get(path)
        return entry is not None and entry.key[1] == info.st_ino

    def _drop(self, top: str, found: _Found) -> None:
        """Forget the folder ``top`` and everything beneath it (its files reported deleted)."""
        pending = [top]
        while pending:
            directory = pending.pop()
            entry = self._dirs.pop(directory, None)
            if entry is None:
                continue
            if self.events is not None and self._listener is not None:
                self.events.unwatch(self._listener, directory)
            for name in entry.files:
                path = os.path.join(directory, name)
                self._files.pop(path, None)
                found.deleted.append(path)
            pending += [os.path.join(directory, name) for name in entry.subdirs]

    def _rescan(self, found: _Found) -> None:
        """Events were lost: list the whole tree again and compare it with what was seen."""
        self.rescans += 1
        before = self._files
        self._reset(too_large=False)
        self._ready = self._scan(self.root, None)
        after = self._files
        found.created += [path for path in after if path not in before]
        found.changed += [path for path, info in after.items() if before.get(path, info) != info]
        found.deleted += [path for path in before if path not in after]


def _key(path: str) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _file_stat(path: str) -> Stat | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def snapshot(
    root: Path, excluded: Collection[str] = (), max_entries: int = MAX_ENTRIES
) -> Snapshot | None:
    """The regular files under ``root`` with their stats, listed afresh; None when the tree
    has more than ``max_entries`` entries (or ``root`` cannot be listed)."""
    tree = Tree(root, excluded, max_entries)
    return None if tree.refresh() is None else tree.files
