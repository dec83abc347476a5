"""How late the daemon's event loop runs: :class:`LoopLag`, a timer that asks to wake every
:data:`INTERVAL` seconds and measures how much later it woke (the time callbacks had to
wait for the loop: a blocking call, a burst of work).

It runs from the first ``daemon/metrics`` request (or ``/metrics`` scrape) on, so a daemon
nobody measures never wakes for it.
"""

from __future__ import annotations

import asyncio
from collections import deque

INTERVAL = 0.5
"""Seconds between probes."""
WINDOW = 120
"""Probes the maximum is taken over (one minute)."""


class LoopLag:
    """The loop's lateness: the last probe's and the largest of the last minute's, in ms."""

    def __init__(self) -> None:
        self._recent: deque[float] = deque(maxlen=WINDOW)
        self._handle: asyncio.TimerHandle | None = None
        self._due = 0.0

    @property
    def running(self) -> bool:
        return self._handle is not None

    def start(self) -> None:
        """Begin probing (on the running loop; again: nothing)."""
        if self._handle is None:
            self._schedule(asyncio.get_running_loop())

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    @property
    def last_ms(self) -> float:
        return self._recent[-1] if self._recent else 0.0

    @property
    def max_ms(self) -> float:
        return max(self._recent, default=0.0)

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        self._due = loop.time() + INTERVAL
        self._handle = loop.call_at(self._due, self._tick, loop)

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        self._recent.append(max(loop.time() - self._due, 0.0) * 1000)
        self._schedule(loop)
