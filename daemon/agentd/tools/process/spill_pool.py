"""Spill files of background processes, written by one thread for all of them.

A :class:`~agentd.tools.process.spill.SpillWriter` has a thread of its own, which suits a
foreground call. Twenty background processes printing at once would make twenty threads that
redact (regular expressions holding the interpreter lock) and contend with the event loop for
it, each hand-over a wait for the loop; so :class:`PooledSpillWriter` queues its pieces to the
daemon's one background-spill thread instead, in order per file. Everything else (the cap,
redaction across pieces, the first error ending the file, :attr:`backlog`) is the
SpillWriter's.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from agentd.tools.process.spill import SpillWriter

_Job = tuple["PooledSpillWriter", bytes | None]


class _Pool:
    """The one thread (started on first use, a daemon thread) and its queue."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, writer: PooledSpillWriter, piece: bytes | None) -> None:
        self._jobs.put((writer, piece))
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="agentd-bg-spill", daemon=True
                )
                self._thread.start()

    def _serve(self) -> None:
        while True:
            writer, piece = self._jobs.get()
            if piece is None:
                writer._close_file()
                writer.closed.set()
                continue
            if writer._handle is not None:
                writer._put(piece)
            with writer._lock:
                writer._backlog -= len(piece)


_POOL = _Pool()


class PooledSpillWriter(SpillWriter):
    """A spill file written by the shared thread (see the module docstring)."""

    def __init__(
        self,
        handle: BinaryIO | None,
        path: Path | None,
        max_bytes: int,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(handle, path, max_bytes, redact)
        self.closed = threading.Event()

    def _enqueue(self, piece: bytes) -> None:
        _POOL.submit(self, piece)

    def _finish(self) -> None:
        if not self._closing:
            self._closing = True
            _POOL.submit(self, None)

    def close(self) -> None:
        """Write what is queued, flush and close (blocks: not on the event loop)."""
        self._finish()
        self.closed.wait()
