"""Linux inotify through ctypes, for the bash tree watch (:mod:`agentd.session.treewatch`).

One inotify instance serves the whole daemon (the kernel allows a user only
``fs.inotify.max_user_instances``, often 128, and every session would need its own
otherwise); it is opened on the first bash command. Each watched tree registers a
:class:`Listener` and adds one watch per directory it holds; :meth:`Inotify.drain` reads every
queued event, hands each listener the ``(directory, name)`` pairs it watches and returns the
caller's. Events are
queued by the kernel inside the system call that changes the file, so after a command has
exited, one drain sees everything it did (the command's own mount namespace included: a
bubblewrap bind shares the inodes). A full queue (``IN_Q_OVERFLOW``) tells every listener to
compare its whole tree again.

:func:`shared` is None where inotify cannot be used (not Linux, no libc symbol, the instance
limit reached): the tree watch then compares stats instead.
"""

from __future__ import annotations

import collections
import ctypes
import errno
import os
import struct
import sys
import threading
from typing import Self

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
    | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK
)  # fmt: skip
"""What a directory watch reports: any change of an entry in it, and of itself."""

MAX_NOTED = 20_000
"""Events kept for a listener between two of its refreshes; beyond, it compares its whole
tree at the next (as after a kernel queue overflow)."""

_HEADER = struct.Struct("iIII")
_READ_SIZE = 256 * 1024


class Listener:
    """One tree's share of the instance: its watches (descriptor → directory path) and the
    events found for it since it last took them."""

    def __init__(self) -> None:
        self.paths: dict[int, str] = {}
        self.watches: dict[str, int] = {}
        """The same, path → descriptor."""
        self.events: collections.deque[tuple[str, str]] = collections.deque()
        self.overflowed = False

    def take(self) -> tuple[list[tuple[str, str]], bool]:
        """The ``(directory, name)`` events noted so far (``name`` empty for the directory
        itself), and whether some were lost (compare everything); both cleared. Called with
        the instance's lock held (:meth:`Inotify.drain`)."""
        events: list[tuple[str, str]] = []
        while self.events:
            events.append(self.events.popleft())
        overflowed, self.overflowed = self.overflowed, False
        return events, overflowed


class Inotify:
    """The daemon's inotify instance (see the module docstring). Thread-safe."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc, self._fd = libc, fd
        self._lock = threading.Lock()
        self._watchers: dict[int, set[Listener]] = {}
        self._listeners: set[Listener] = set()
        self._unwanted: collections.deque[Listener] = collections.deque()
        """Listeners :meth:`release_later` could not release at once."""

    @classmethod
    def open(cls) -> Self | None:
        """A new instance; None where inotify cannot be used (the module docstring)."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)  # the process's own symbols, libc's too
            init = libc.inotify_init1
        except (OSError, AttributeError):
            return None
        init.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        fd = init(IN_NONBLOCK | IN_CLOEXEC)
        return None if fd < 0 else cls(libc, fd)

    def close(self) -> None:
        """Close the instance (every watch ends with it)."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def register(self) -> Listener:
        listener = Listener()
        with self._lock:
            self._listeners.add(listener)
        return listener

    def watch(self, listener: Listener, path: str) -> bool:
        """Watch the directory ``path`` for ``listener``. True when watched or gone (not a
        directory any more: nothing to watch); False when the kernel refuses another watch
        (``fs.inotify.max_user_watches``), or any other failure."""
        with self._lock:
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), MASK)
            if wd < 0:
                return ctypes.get_errno() in (errno.ENOENT, errno.ENOTDIR)
            earlier = listener.paths.get(wd)
            if earlier is not None and earlier != path:  # the folder moved: one watch, new path
                listener.watches.pop(earlier, None)
            listener.paths[wd] = path
            listener.watches[path] = wd
            self._watchers.setdefault(wd, set()).add(listener)
        return True

    def unwatch(self, listener: Listener, path: str) -> None:
        """Stop watching ``path`` for ``listener`` (the kernel's watch goes with its last
        listener)."""
        with self._lock:
            wd = listener.watches.pop(path, None)
            if wd is not None and listener.paths.get(wd) == path:
                self._forget(listener, wd)

    def clear(self, listener: Listener) -> None:
        """Every watch of ``listener`` ends, and the events noted for it are dropped."""
        with self._lock:
            for wd in list(listener.paths):
                self._forget(listener, wd)
            listener.events.clear()
            listener.overflowed = False

    def release(self, listener: Listener) -> None:
        """:meth:`clear`, and ``listener`` hears nothing more."""
        with self._lock:
            self._release(listener)
            self._release_unwanted()

    def release_later(self, listener: Listener) -> None:
        """:meth:`release` from a finalizer: at once when the lock is free, else by the next
        call that takes it. A finalizer runs wherever the garbage collector does, possibly in
        a thread inside :meth:`drain` holding the lock (waiting for it there would never
        end)."""
        self._unwanted.append(listener)
        if self._lock.acquire(blocking=False):
            try:
                self._release_unwanted()
            finally:
                self._lock.release()

    def _release_unwanted(self) -> None:
        while self._unwanted:
            self._release(self._unwanted.popleft())

    def _release(self, listener: Listener) -> None:
        for wd in list(listener.paths):
            self._forget(listener, wd)
        listener.events.clear()
        listener.overflowed = False
        self._listeners.discard(listener)

    def _forget(self, listener: Listener, wd: int) -> None:
        path = listener.paths.pop(wd)
        if listener.watches.get(path) == wd:
            del listener.watches[path]
        holders = self._watchers.get(wd)
        if holders is not None:
            holders.discard(listener)
            if not holders:
                del self._watchers[wd]
                self._libc.inotify_rm_watch(self._fd, wd)

    def drain(self, listener: Listener) -> tuple[list[tuple[str, str]], bool]:
        """Read every queued event, note each for the listeners that watch its directory, and
        take ``listener``'s (:meth:`Listener.take`)."""
        with self._lock:
            self._release_unwanted()
            while True:
                try:
                    data = os.read(self._fd, _READ_SIZE)
                except (BlockingIOError, InterruptedError):
                    break
                if not data:
                    break
                self._dispatch(data)
            return listener.take()

    def _dispatch(self, data: bytes) -> None:
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
            offset += _HEADER.size
            raw = data[offset : offset + length].split(b"\0", 1)[0]
            offset += length
            if mask & IN_Q_OVERFLOW:
                for listener in self._listeners:
                    listener.overflowed = True
                continue
            name = os.fsdecode(raw)
            for listener in self._watchers.get(wd, ()):
                path = listener.paths.get(wd)
                if path is None or listener.overflowed:
                    continue
                listener.events.append((path, name))
                if len(listener.events) > MAX_NOTED:  # a tree not refreshed for long
                    listener.events.clear()
                    listener.overflowed = True


_lock = threading.Lock()
_shared: Inotify | None = None
_tried = False


def shared() -> Inotify | None:
    """The daemon's instance, opened on first use; None where inotify is not available."""
    global _shared, _tried
    with _lock:
        if not _tried:
            _tried = True
            _shared = Inotify.open()
        return _shared
