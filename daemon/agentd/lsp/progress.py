"""``$/progress`` for one running prompt: begin, batched reports, end.

A reply streams as many small text deltas; an editor redraws on every report. So reports are
batched: at most one per :data:`REPORT_INTERVAL` seconds, each carrying every piece of text
(and tool line) since the previous one, so the reports' messages joined are the whole
stream, nothing lost. The end waits for the interval when text is pending (at most
:data:`REPORT_INTERVAL`), sends it, then the end report.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from agentd.protocol.controls import scrub

REPORT_INTERVAL = 0.05
"""Seconds between two progress reports, at least."""

Notify = Callable[[str, Any], None]
"""Sends one notification: method and params (plain JSON values)."""


class ProgressReporter:
    """Reports of one work-done progress ``token`` (see the module docstring).

    :meth:`text` and :meth:`line` never block: they append to the pending message and arm
    one timer; :meth:`end` flushes and closes. Calls after :meth:`end` are ignored.
    """

    def __init__(self, notify: Notify, token: int | str, interval: float = REPORT_INTERVAL) -> None:
        self._notify = notify
        self.token = token
        self.interval = interval
        self._pending: list[str] = []
        self._last_sent = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._ended = False
        self.reports = 0
        """How many reports were sent (for the bench)."""

    def begin(self, title: str, message: str | None = None) -> None:
        """The progress starts (cancellable: the editor may offer to cancel it)."""
        value: dict[str, Any] = {"kind": "begin", "title": title, "cancellable": True}
        if message:
            value["message"] = message
        self._send(value)

    def text(self, delta: str) -> None:
        """More streamed text of the reply."""
        if delta and not self._ended:
            self._pending.append(delta)
            self._arm()

    def line(self, text: str) -> None:
        """A line of its own (a tool call), on a new line after the streamed text."""
        if self._ended:
            return
        joined = "".join(self._pending)
        starts_line = (joined or self._tail).endswith("\n") or not (joined or self._tail)
        self._pending.append(("" if starts_line else "\n") + text + "\n")
        self._arm()

    _tail = ""
    """The end of the text reported so far (whether the next line starts a new one)."""

    async def end(self, message: str) -> None:
        """Send what is pending (when the interval allows), then the end report with
        ``message`` (the stop reason)."""
        if self._ended:
            return
        if self._pending:
            wait = self._last_sent + self.interval - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        self._flush()
        self._ended = True
        self._send({"kind": "end", "message": message})

    def _arm(self) -> None:
        if self._timer is not None:
            return
        loop = asyncio.get_running_loop()
        due = max(self._last_sent + self.interval - time.monotonic(), 0.0)
        self._timer = loop.call_later(due, self._flush)

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending or self._ended:
            return
        message = "".join(self._pending)
        self._pending.clear()
        self._tail = message[-1:]
        self._last_sent = time.monotonic()
        self.reports += 1
        self._send({"kind": "report", "message": message})

    def _send(self, value: dict[str, Any]) -> None:
        """One ``$/progress`` value, its texts with control characters escaped (the model's
        text and tool lines reach an editor that may print them to a terminal)."""
        self._notify("$/progress", {"token": self.token, "value": scrub(value)})
