"""Capturing and streaming command output.

:class:`OutputCapture` keeps the whole output in memory while it fits the result limits;
once it exceeds them, the output (from the first byte, up to a cap) goes to a spill file (see
:mod:`agentd.tools.process.spill` for where and for how long) and only a bounded tail stays in
memory, so a command printing gigabytes costs constant memory and bounded disk, even when
the disk is full.
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

from agentd.tools.defaults import SPILL_MAX_BYTES
from agentd.tools.files.truncate import Limits, Truncation, truncate_tail
from agentd.tools.process.spill import KEEP_PER_SESSION, SpillWriter, fallback_dir

MAX_PENDING_CHARS = 64 * 1024


class OutputCapture:
    """Merged stdout+stderr of one command, with spill-to-file past the limits.

    Memory is bounded whatever happens: once the output exceeds the result limits only a tail
    of about twice ``limits.max_bytes`` stays in memory. The spill file goes to ``spill_dir``
    (a per-user directory under the temp dir when None), where at most ``keep`` spill files are
    kept; it holds the first ``spill_max_bytes`` bytes of the output. The first error opening
    or writing it (a full disk) stops spilling for good and logs one warning; the result then
    says how much the file holds (:meth:`spill_note`).
    """

    def __init__(
        self,
        limits: Limits,
        spill_dir: Path | None,
        keep: int = KEEP_PER_SESSION,
        spill_max_bytes: int = SPILL_MAX_BYTES,
        redact: Callable[[str], str] | None = None,
    ):
        self.redact = redact
        self.limits = limits
        self.spill_dir = spill_dir
        self.keep = keep
        self.spill_max_bytes = spill_max_bytes
        self.total_bytes = 0
        self.newlines = 0
        self.overflowed = False
        self._buffer = bytearray()
        self._keep = limits.max_bytes * 2 + 4096
        self._spill: SpillWriter | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes) -> None:
        """Add a chunk of output (never raises for spill-file errors)."""
        self.total_bytes += len(data)
        self.newlines += data.count(b"\n")
        self._buffer += data
        if not self.overflowed and self._over_limits():
            self.overflowed = True
            self._spill = SpillWriter.open(
                self.spill_dir or fallback_dir(), self.keep, self.spill_max_bytes, self.redact
            )
            self._spill.write(bytes(self._buffer))
        elif self._spill is not None:
            self._spill.write(data)
        if self.overflowed and len(self._buffer) > 2 * self._keep:
            del self._buffer[: len(self._buffer) - self._keep]

    def _over_limits(self) -> bool:
        return self.total_bytes > self.limits.max_bytes or self.newlines > self.limits.max_lines

    def decode_delta(self, data: bytes, final: bool = False) -> str:
        """Text of ``data`` for streaming (multi-byte characters split across chunks kept)."""
        return self._decoder.decode(data, final)

    @property
    def backlog(self) -> int:
        """Output bytes waiting to be written to the spill file."""
        return self._spill.backlog if self._spill is not None else 0

    def close(self) -> None:
        """Write what is queued, flush and close the spill file (idempotent; may block on the
        disk: call it off the event loop)."""
        if self._spill is not None:
            self._spill.close()

    @property
    def spilled(self) -> bool:
        return self.spill_path is not None

    @property
    def spill_path(self) -> Path | None:
        """The spill file, if one was created (it may hold only part of the output)."""
        return self._spill.path if self._spill is not None else None

    @property
    def spill_complete(self) -> bool:
        """Whether the spill file holds the whole output."""
        return self._spill is not None and self._spill.written == self.total_bytes

    def spill_note(self) -> str:
        """For a truncated result: where the rest of the output is, and how much of it."""
        spill, total = self._spill, self.total_bytes
        if spill is None or spill.path is None:
            reason = spill.error if spill is not None else "no spill file"
            return f"The full output ({total} bytes) could not be saved ({reason})."
        if self.spill_complete:
            return (
                f"The full output ({total} bytes) is in {spill.path}: read or grep that file "
                "to see the rest."
            )
        why = (
            f"writing it failed ({spill.error})"
            if spill.error
            else f"spill files are capped at {self.spill_max_bytes} bytes"
        )
        return (
            f"Only the first {spill.written} of {total} bytes of output are in {spill.path} "
            f"({why}); read or grep that file for the start."
        )

    def tail(self) -> Truncation:
        """The end of the output within the limits (everything when it fit)."""
        text = self._buffer.decode("utf-8", "replace")
        result = truncate_tail(text, self.limits)
        if not self.overflowed:
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
    """Delivers pushed text to ``callback`` at most once per ``interval`` seconds, at most
    ``max_pending`` characters of it (the newest; the older are counted as not streamed)."""

    def __init__(
        self,
        callback: Callable[[str], None],
        interval: float,
        max_pending: int = MAX_PENDING_CHARS,
    ) -> None:
        self.callback = callback
        self.interval = interval
        self.max_pending = max_pending
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
        while self._size > self.max_pending and len(self._pending) > 1:
            dropped = self._pending.pop(0)
            self._size -= len(dropped)
            self._skipped += len(dropped)
        if self._size > self.max_pending:  # one piece larger than the cap: keep its end
            piece = self._pending[0]
            self._pending[0] = piece[len(piece) - self.max_pending :]
            self._skipped += len(piece) - self.max_pending
            self._size = self.max_pending
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
