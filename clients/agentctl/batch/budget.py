"""The whole batch's spending caps and pace, shared by all its tasks.

:class:`BatchBudget`: ``--max-cost`` (USD) and ``--max-tokens`` over every task of this run.
Spend is counted live, per model call (the ``turn`` events), and settled with each finished
task's record. Once a cap is reached no task starts, and the scheduler stops the running
ones; each run is also given what is left of the caps when it starts, so the daemon stops
it before a model call that would pass them, and such a stop counts as the caps reached.

:class:`Pace`: ``--rate`` (task starts per second) and the backoff the provider asks for:
a ``retry`` after HTTP 429 holds every new start for the delay it gave and halves how many
tasks may run at once; each task that finishes without one after the hold lets one more run
again.
"""

from __future__ import annotations

import asyncio
import time

from agentctl.batch.engine import TaskCaps, TaskEvent
from agentctl.batch.records import ResultRecord
from agentctl.batch.tasks import Task


class BatchBudget:
    """See the module docstring. ``None`` caps: unlimited."""

    def __init__(self, max_cost: float | None, max_tokens: int | None) -> None:
        self.max_cost = max_cost
        self.max_tokens = max_tokens
        self.cost = 0.0
        self.tokens = 0
        self._live: dict[str, tuple[float, int]] = {}
        self._exhausted = False

    def observe(self, event: TaskEvent) -> None:
        """Count a model call's spend (``turn`` events)."""
        if event.kind != "turn":
            return
        cost, tokens = self._live.get(event.task_id, (0.0, 0))
        self._live[event.task_id] = (cost + event.cost, tokens + event.tokens)
        self.cost += event.cost
        self.tokens += event.tokens

    def settle(self, record: ResultRecord) -> None:
        """Replace a task's live count with its record's totals."""
        cost, tokens = self._live.pop(record.id, (0.0, 0))
        self.cost += record.cost - cost
        self.tokens += record.usage.total - tokens

    def exhaust(self) -> None:
        """A run given what was left of the caps was stopped before a model call that would
        have passed them: no further call fits, so the caps count as reached from now on,
        though the spend is still under them."""
        self._exhausted = True

    @property
    def reached(self) -> bool:
        """Whether a cap is reached (nothing more may be spent)."""
        over_cost = self.max_cost is not None and self.cost >= self.max_cost
        over_tokens = self.max_tokens is not None and self.tokens >= self.max_tokens
        return self._exhausted or over_cost or over_tokens

    def caps_for(self, task: Task) -> tuple[TaskCaps, bool]:
        """The caps of a run starting now, and whether the batch's remainder (not the task's
        own ``max_cost``) is what limits its cost or tokens."""
        from_batch = self.max_tokens is not None
        cost = task.max_cost
        if self.max_cost is not None:
            left = max(self.max_cost - self.cost, 1e-9)
            if cost is None or left < cost:
                cost, from_batch = left, True
        tokens = None if self.max_tokens is None else max(self.max_tokens - self.tokens, 1)
        return TaskCaps(max_cost=cost, max_tokens=tokens), from_batch


class Pace:
    """See the module docstring. ``limit`` is how many tasks may run at once now."""

    RAMP_GAP_S = 1.0
    """Several 429s within this long halve the limit once."""

    def __init__(self, concurrency: int, rate: float | None) -> None:
        self.concurrency = concurrency
        self.limit = concurrency
        self.rate = rate
        self._next_start = 0.0
        self._hold_until = 0.0
        self._last_cut = 0.0
        self._backing_off: set[str] = set()

    async def wait_start(self) -> None:
        """Wait until a task may start under ``--rate`` and any backoff."""
        while True:
            now = time.monotonic()
            wake = max(self._next_start, self._hold_until)
            if wake <= now:
                break
            await asyncio.sleep(wake - now)
        if self.rate is not None:
            self._next_start = max(self._next_start, time.monotonic()) + 1.0 / self.rate

    def observe(self, event: TaskEvent) -> None:
        """Back off on a provider 429 (``retry`` events); ramp up on tasks finishing cleanly."""
        now = time.monotonic()
        if event.kind == "retry" and event.status == 429:
            self._hold_until = max(self._hold_until, now + event.delay_ms / 1000)
            self._backing_off.add(event.task_id)
            if now - self._last_cut >= self.RAMP_GAP_S:
                self.limit = max(1, self.limit // 2)
                self._last_cut = now
        elif event.kind == "finished":
            if event.task_id not in self._backing_off and now >= self._hold_until:
                self.limit = min(self.concurrency, self.limit + 1)
            self._backing_off.discard(event.task_id)

    @property
    def holding(self) -> bool:
        """Whether new starts are held by a backoff now."""
        return time.monotonic() < self._hold_until
