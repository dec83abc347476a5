"""The batch's output while it runs.

- :class:`TextProgress`: one line per finished task on stdout (``✓``/``✗``, id, status,
  turns, cost, time, the error), and, when stderr is a terminal, a live line there (done /
  running / failed / queued, pass rate so far, cost, ETA), redrawn at most 10 times a second.
- :class:`JsonProgress` (``--json``): a JSON line per event on stdout: ``batch_start``,
  ``task_start``, ``task_retry``, ``task_end`` (the record under ``result``), ``batch_stop``
  and ``batch_end``. Each line is flushed as it is written.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

import msgspec

from agentctl.batch.engine import TaskEvent
from agentctl.batch.records import ResultRecord
from agentctl.batch.runner import BatchObserver, BatchOutcome
from agentctl.batch.tasks import TaskLineError

REDRAW_S = 0.1


class TextProgress(BatchObserver):
    """See the module docstring. ``live`` forces the live line on or off."""

    def __init__(
        self, out: IO[str] | None = None, err: IO[str] | None = None, live: bool | None = None
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.live = self.err.isatty() if live is None else live
        self.done = self.failed = self.passed = self.running = self.queued = 0
        self.cost = 0.0
        self.started_at = time.monotonic()
        self._drawn = 0.0
        self._line_shown = False

    def started(self, queued: int, skipped: int, invalid: list[TaskLineError]) -> None:
        self.queued = queued
        for error in invalid:
            self._say(self.err, f"agentctl batch: {error}")
        if skipped:
            self._say(self.err, f"agentctl batch: {skipped} task(s) already done, skipped")

    def event(self, event: TaskEvent, running: int, queued: int) -> None:
        self.running, self.queued = running, queued
        if event.kind == "turn":
            self.cost += event.cost
        elif event.kind == "finished" and event.record is not None:
            self._finished(event.record)
        self._draw(force=event.kind == "finished")

    def _finished(self, record: ResultRecord) -> None:
        self.done += 1
        if record.status == "passed":
            self.passed += 1
        else:
            self.failed += 1
        self._say(self.out, finished_line(record))

    def stopping(self, reason: str) -> None:
        self._say(self.err, f"agentctl batch: {reason}: stopping the running tasks")

    def finished(self, outcome: BatchOutcome) -> None:
        self._clear()
        counts = ", ".join(f"{n} {status}" for status, n in sorted(outcome.counts.items()))
        extra = f", {outcome.not_started} not started" if outcome.not_started else ""
        self._say(
            self.err,
            f"agentctl batch: {counts or 'nothing run'}{extra}; cost ${outcome.cost:.4f}, "
            f"{outcome.tokens} tokens",
        )

    def _say(self, stream: IO[str], text: str) -> None:
        self._clear()
        stream.write(text + "\n")
        stream.flush()
        self._draw(force=True)

    def _clear(self) -> None:
        if self._line_shown:
            self.err.write("\r\x1b[K")
            self._line_shown = False

    def _draw(self, *, force: bool = False) -> None:
        if not self.live:
            return
        now = time.monotonic()
        if not force and now - self._drawn < REDRAW_S:
            return
        self._drawn = now
        self.err.write("\r\x1b[K" + self.status_line(now))
        self.err.flush()
        self._line_shown = True

    def status_line(self, now: float) -> str:
        """``done 12 · running 4 · failed 2 · queued 30 · pass 83% · $0.0123 · ETA 1m05s``."""
        rate = f"{100 * self.passed / self.done:.0f}%" if self.done else "–"
        eta = "–"
        if self.done:
            left = (now - self.started_at) / self.done * (self.queued + self.running)
            eta = f"{int(left // 60)}m{int(left % 60):02d}s"
        return (
            f"done {self.done} · running {self.running} · failed {self.failed} · "
            f"queued {self.queued} · pass {rate} · ${self.cost:.4f} · ETA {eta}"
        )


def finished_line(record: ResultRecord) -> str:
    """One finished task as a line of text."""
    mark = "✓" if record.status == "passed" else "✗"
    check = "" if record.check_exit_code is None else f" check={record.check_exit_code}"
    error = f" — {record.error}" if record.error else ""
    return (
        f"{mark} {record.id} {record.status} turns={record.turns}{check} "
        f"${record.cost:.4f} {record.duration_ms / 1000:.1f}s{error}"
    )


class JsonProgress(BatchObserver):
    """``--json``: see the module docstring."""

    def __init__(self, out: IO[bytes] | None = None) -> None:
        self.out = out or sys.stdout.buffer
        self._encoder = msgspec.json.Encoder()

    def _write(self, line: dict[str, Any]) -> None:
        self.out.write(self._encoder.encode(line) + b"\n")
        self.out.flush()

    def started(self, queued: int, skipped: int, invalid: list[TaskLineError]) -> None:
        for error in invalid:
            self._write({"type": "task_invalid", **msgspec.to_builtins(error)})
        self._write({"type": "batch_start", "queued": queued, "skipped": skipped})

    def event(self, event: TaskEvent, running: int, queued: int) -> None:
        if event.kind == "started":
            self._write({"type": "task_start", "id": event.task_id, "session_id": event.session_id})
        elif event.kind == "retry":
            self._write(
                {"type": "task_retry", "id": event.task_id, "delay_ms": event.delay_ms,
                 "status": event.status, "error": event.error}
            )  # fmt: skip
        elif event.kind == "finished" and event.record is not None:
            self._write({"type": "task_end", "id": event.task_id, "result": event.record})

    def stopping(self, reason: str) -> None:
        self._write({"type": "batch_stop", "reason": reason})

    def finished(self, outcome: BatchOutcome) -> None:
        self._write(
            {"type": "batch_end", "counts": outcome.counts, "skipped": outcome.skipped,
             "invalid": outcome.invalid, "not_started": outcome.not_started,
             "cost": round(outcome.cost, 6), "tokens": outcome.tokens,
             "stopped": outcome.stopped, "exit_code": outcome.exit_code}
        )  # fmt: skip
