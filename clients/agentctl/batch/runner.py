"""The scheduler: which tasks run (shard, resume, ``--retry-failed``), how many at once, the
whole batch's budget and pace, Ctrl-C, and ``results.jsonl``.

:func:`plan_batch` reads the task file and the output folder; :func:`run_batch` runs the
plan on an engine. Only small values are kept per task (its id and status); each record goes
to disk and to the progress output as it arrives and is then dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentctl.batch.budget import BatchBudget, Pace
from agentctl.batch.engine import BatchSettings, Engine, StopRequest, TaskEvent, TaskJob
from agentctl.batch.records import (
    FINAL_STATUSES,
    RETRIED_STATUSES,
    BatchFile,
    ResultRecord,
)
from agentctl.batch.store import (
    ResultsFile,
    latest_statuses,
    now_iso,
    read_batch_file,
    write_batch_file,
)
from agentctl.batch.tasks import Task, TaskLineError, in_shard, read_tasks
from agentctl.run import outcome
from agentd.api.tracecontext import new_span_id, new_trace_id

BATCH_BUDGET = "batch budget reached"
INTERRUPTED = "interrupted"


@dataclass
class BatchPlan:
    """What a run of the batch will do: the tasks to run (with their attempt numbers), how
    many were skipped as done, and the file's bad lines."""

    todo: list[tuple[Task, int]] = field(default_factory=list)
    skipped: int = 0
    invalid: list[TaskLineError] = field(default_factory=list)
    batch: BatchFile | None = None


def plan_batch(
    tasks_file: Path,
    out_dir: Path,
    *,
    shard: tuple[int, int] | None = None,
    retry_failed: bool = False,
    engine: str = "local",
) -> BatchPlan:
    """Read ``tasks_file`` (``OSError`` if it cannot be) and the results so far. A task is
    skipped when its latest record is final (and, with ``retry_failed``, not a failure)."""
    plan = BatchPlan()
    statuses = latest_statuses(out_dir)
    position = -1
    for item in read_tasks(tasks_file):
        position += 1
        if not in_shard(position, shard):
            continue
        if isinstance(item, TaskLineError):
            plan.invalid.append(item)
            continue
        status, attempts = statuses.get(item.id, ("", 0))
        done = status in FINAL_STATUSES and not (retry_failed and status in RETRIED_STATUSES)
        if done:
            plan.skipped += 1
        else:
            plan.todo.append((item, attempts + 1))
    plan.batch = _batch_file(tasks_file, out_dir, plan, shard, engine)
    return plan


def _batch_file(
    tasks_file: Path,
    out_dir: Path,
    plan: BatchPlan,
    shard: tuple[int, int] | None,
    engine: str,
) -> BatchFile:
    earlier = read_batch_file(out_dir)
    return BatchFile(
        batch_trace_id=earlier.batch_trace_id if earlier else new_trace_id(),
        created_at=earlier.created_at if earlier else now_iso(),
        tasks_file=str(tasks_file.resolve()),
        engine=engine,
        tasks=len(plan.todo) + plan.skipped + len(plan.invalid),
        shard=f"{shard[0]}/{shard[1]}" if shard else None,
        invalid_lines=[
            {"line": e.line, "field": e.field, "message": e.message, "id": e.id}
            for e in plan.invalid
        ],
        updated_at=now_iso(),
    )


class BatchObserver:
    """What the scheduler tells the progress output (see :mod:`agentctl.batch.progress`)."""

    def started(self, queued: int, skipped: int, invalid: list[TaskLineError]) -> None: ...

    def event(self, event: TaskEvent, running: int, queued: int) -> None: ...

    def stopping(self, reason: str) -> None: ...

    def finished(self, outcome: BatchOutcome) -> None: ...


@dataclass
class BatchOutcome:
    """How the run of the batch ended, and its exit code (:meth:`exit_code`)."""

    counts: dict[str, int] = field(default_factory=dict)
    invalid: int = 0
    skipped: int = 0
    not_started: int = 0
    cost: float = 0.0
    tokens: int = 0
    stopped: str | None = None

    def count(self, record: ResultRecord) -> None:
        self.counts[record.status] = self.counts.get(record.status, 0) + 1

    @property
    def exit_code(self) -> int:
        """130 after Ctrl-C; 6 when the batch's cap left tasks unrun or stopped; 1 when a
        task did not pass, a line was bad or the results could not be written; else 0."""
        if self.stopped == INTERRUPTED:
            return outcome.INTERRUPTED
        if self.stopped == BATCH_BUDGET:
            return outcome.BUDGET
        if self.stopped is not None:
            return outcome.AGENT_ERROR
        failures = sum(n for status, n in self.counts.items() if status != "passed")
        return outcome.AGENT_ERROR if failures or self.invalid else outcome.OK


class _Scheduler:
    def __init__(
        self,
        engine: Engine,
        settings: BatchSettings,
        budget: BatchBudget,
        pace: Pace,
        results: ResultsFile,
        observer: BatchObserver,
    ) -> None:
        self.engine = engine
        self.settings = settings
        self.budget = budget
        self.pace = pace
        self.results = results
        self.observer = observer
        self.outcome = BatchOutcome()
        self.running: dict[str, StopRequest] = {}
        self.queued = 0
        self.changed = asyncio.Event()

    def stop(self, reason: str) -> None:
        """Start no more tasks; stop the running ones with ``reason``."""
        if self.outcome.stopped is None:
            self.outcome.stopped = reason
            self.observer.stopping(reason)
        for request in list(self.running.values()):
            request.set(reason)
        self.changed.set()

    def progress(self, event: TaskEvent) -> None:
        self.budget.observe(event)
        self.pace.observe(event)
        self.observer.event(event, len(self.running), self.queued)
        if self.budget.reached and self.running:
            self.stop(BATCH_BUDGET)

    async def run(self, todo: list[tuple[Task, int]]) -> None:
        self.queued = len(todo)
        workers: set[asyncio.Task[None]] = set()
        for task, attempt in todo:
            while len(self.running) >= self.pace.limit and self.outcome.stopped is None:
                self.changed.clear()
                await self.changed.wait()
            if self.outcome.stopped is None:
                await self.pace.wait_start()
            if self.outcome.stopped is None and self.budget.reached:
                self.stop(BATCH_BUDGET)
            if self.outcome.stopped is not None:
                break
            self.queued -= 1
            request = StopRequest()
            self.running[task.id] = request
            worker = asyncio.create_task(self._one(task, attempt, request))
            workers.add(worker)
            worker.add_done_callback(workers.discard)
        self.outcome.not_started = self.queued
        if workers:
            await asyncio.gather(*workers)

    async def _one(self, task: Task, attempt: int, request: StopRequest) -> None:
        caps, from_batch = self.budget.caps_for(task)
        job = TaskJob(
            task=task,
            settings=self.settings,
            caps=caps,
            trace_id=self.settings.batch_trace_id or new_trace_id(),
            span_id=new_span_id(),
            attempt=attempt,
            stop=request,
        )
        try:
            record = await self.engine.run_task(job, self.progress)
        except Exception as exc:  # an engine's own failure: the task's record says so
            record = ResultRecord(
                id=task.id, status="error", stop_reason="error", exit_code=outcome.AGENT_ERROR,
                error=f"{self.engine.name} engine: {exc}", trace_id=job.trace_id,
                span_id=job.span_id, attempt=attempt, engine=self.engine.name,
                finished_at=now_iso(),
            )  # fmt: skip
        if record.status == "budget" and from_batch:
            record.status, record.error = "cancelled", BATCH_BUDGET
            self.budget.exhaust()
        self.budget.settle(record)
        try:
            self.results.append(record)
        except OSError as exc:  # a full disk: stop, rather than run tasks nobody records
            self.stop(f"cannot write {self.results.path}: {exc.strerror or exc}")
        self.outcome.count(record)
        del self.running[task.id]
        self.progress(TaskEvent(kind="finished", task_id=task.id, record=record))
        self.changed.set()


async def run_batch(
    engine: Engine,
    plan: BatchPlan,
    settings: BatchSettings,
    observer: BatchObserver,
    *,
    max_cost: float | None = None,
    max_tokens: int | None = None,
    rate: float | None = None,
    on_interrupt: Callable[[Callable[[str], None]], contextlib.AbstractContextManager[None]]
    | None = None,
) -> BatchOutcome:
    """Run ``plan`` on ``engine``; ``on_interrupt(stop)`` is a context manager that calls
    ``stop("interrupted")`` on Ctrl-C (none: no signal handling)."""
    out_dir = Path(settings.out_dir)
    assert plan.batch is not None
    write_batch_file(out_dir, plan.batch)
    results = ResultsFile(out_dir)
    budget = BatchBudget(max_cost, max_tokens)
    scheduler = _Scheduler(
        engine, settings, budget, Pace(settings.concurrency, rate), results, observer
    )
    scheduler.outcome.invalid = len(plan.invalid)
    scheduler.outcome.skipped = plan.skipped
    observer.started(len(plan.todo), plan.skipped, plan.invalid)
    guard = on_interrupt(scheduler.stop) if on_interrupt else contextlib.nullcontext()
    try:
        with guard:
            if plan.todo:
                await engine.open(settings)
                try:
                    await scheduler.run(plan.todo)
                finally:
                    await engine.close()
    finally:
        results.close()
    scheduler.outcome.cost, scheduler.outcome.tokens = budget.cost, budget.tokens
    observer.finished(scheduler.outcome)
    return scheduler.outcome
