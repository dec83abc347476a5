"""Capturing and streaming command output.

:class:`OutputCapture` keeps the whole output in memory while it fits the result limits;
once it exceeds them, everything (from the first byte) goes to a spill file (see
:mod:`agentd.tools.spill` for where and for how long) and only a bounded tail stays in
memory, so a command printing gigabytes costs constant memory.
:class:`UpdateThrottle` batches streamed deltas so clients get at most one update per
interval, and drops the middle of a burst larger than 64 KB (the final result and the spill
file still have everything).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from agentd.tools.spill import KEEP_PER_SESSION, fallback_dir, open_spill
from agentd.tools.truncate import Limits, Truncation, truncate_tail

MAX_PENDING_CHARS = 64 * 1024


class OutputCapture:
    """Merged stdout+stderr of one command, with spill-to-file past the limits.

    The spill file goes to ``spill_dir`` (a per-user directory under the temp dir when None),
    where at most ``keep`` spill files are kept.
    """

    def __init__(self, limits: Limits, spill_dir: Path | None, keep: int = KEEP_PER_SESSION):
        self.limits = limits
        self.spill_dir = spill_dir
        self.keep = keep
        self.total_bytes = 0
        self.newlines = 0
        self.spill_path: Path | None = None
        self._buffer = bytearray()
        self._keep = limits.max_bytes * 2 + 4096
        self._spill: BinaryIO | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes) -> None:
        """Add a chunk of output."""
        self.total_bytes += len(data)
        self.newlines += data.count(b"\n")
        self._buffer += data
        if self._spill is None and self._over_limits():
            self._start_spill()
        elif self._spill is not None:
            self._spill.write(data)
        if self._spill is not None and len(self._buffer) > 2 * self._keep:
            del self._buffer[: len(self._buffer) - self._keep]

    def _over_limits(self) -> bool:
        return self.total_bytes > self.limits.max_bytes or self.newlines > self.limits.max_lines

    def _start_spill(self) -> None:
        self._spill, self.spill_path = open_spill(self.spill_dir or fallback_dir(), self.keep)
        self._spill.write(self._buffer)

    def decode_delta(self, data: bytes, final: bool = False) -> str:
        """Text of ``data`` for streaming (multi-byte characters split across chunks kept)."""
        return self._decoder.decode(data, final)

    def close(self) -> None:
        """Flush and close the spill file (idempotent)."""
        if self._spill is not None:
            with contextlib.suppress(OSError):
                self._spill.close()

    @property
    def spilled(self) -> bool:
        return self.spill_path is not None

    def tail(self) -> Truncation:
        """The end of the output within the limits (everything when it fit)."""
        text = self._buffer.decode("utf-8", "replace")
        result = truncate_tail(text, self.limits)
        if not self.spilled:
            return result
        total_lines = self.newlines + (0 if self._buffer.endswith(b"\n") else 1)
        return Truncation(
            text=result.text,
            truncated=True,
            limit=result.limit or ("lines" if self.newlines > self.limits.max_lines else "bytes"),
            total_lines=total_lines,
            kept_lines=result.kept_lines,
            total_bytes=self.total_bytes,
            kept_bytes=result.kept_bytes,
        )


class UpdateThrottle:
    """Delivers pushed text to ``callback`` at most once per ``interval`` seconds."""

    def __init__(self, callback: Callable[[str], None], interval: float) -> None:
        self.callback = callback
        self.interval = interval
        self._pending: list[str] = []
        self._size = 0
        self._skipped = 0
        self._handle: asyncio.TimerHandle | None = None

    def push(self, text: str) -> None:
        """Queue ``text``; schedules a flush if none is scheduled."""
        if not text:
            return
        self._pending.append(text)
        self._size += len(text)
        while self._size > MAX_PENDING_CHARS and len(self._pending) > 1:
            dropped = self._pending.pop(0)
            self._size -= len(dropped)
            self._skipped += len(dropped)
        if self._handle is None:
            loop = asyncio.get_running_loop()
            self._handle = loop.call_later(self.interval, self.flush)

    def flush(self) -> None:
        """Deliver everything pending now."""
        self._handle = None
        if not self._pending:
            return
        text = "".join(self._pending)
        if self._skipped:
            text = f"[… {self._skipped} chars not streamed …]\n{text}"
        self._pending.clear()
        self._size = self._skipped = 0
        with contextlib.suppress(Exception):
            self.callback(text)

    def close(self) -> None:
        """Cancel the timer and deliver what is left."""
        if self._handle is not None:
            self._handle.cancel()
        self.flush()
