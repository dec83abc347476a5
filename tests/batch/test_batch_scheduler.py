"""The scheduler (:mod:`agentctl.batch.runner`) with a scripted engine: the pace after a
429, the whole-batch cap stopping running tasks, an engine's own failure, the live line.
The real engine and command are in ``test_batch_e2e.py``."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from agentctl.batch.engine import BatchSettings, Engine, ProgressCallback, TaskEvent, TaskJob
from agentctl.batch.progress import TextProgress
from agentctl.batch.records import ResultRecord
from agentctl.batch.runner import BatchObserver, BatchOutcome, plan_batch, run_batch

Script = Callable[[TaskJob, ProgressCallback], Coroutine[Any, Any, ResultRecord]]


class ScriptedEngine(Engine):
    """Runs each task with ``script``; notes when each started."""

    name = "scripted"

    def __init__(self, script: Script) -> None:
        self.script = script
        self.started: dict[str, float] = {}
        self.running_at_start: dict[str, int] = {}
        self.running = 0
        self.most_at_once = 0

    async def run_task(self, job: TaskJob, progress: ProgressCallback) -> ResultRecord:
        self.started[job.task.id] = time.monotonic()
        self.running_at_start[job.task.id] = self.running + 1
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            return await self.script(job, progress)
        finally:
            self.running -= 1


def _record(job: TaskJob, status: str = "passed", cost: float = 0.0) -> ResultRecord:
    return ResultRecord(id=job.task.id, status=status, stop_reason="end_turn", exit_code=0,  # type: ignore[arg-type]
                        cost=cost, trace_id=job.trace_id, attempt=job.attempt)  # fmt: skip


def _run(
    tmp_path: Path, count: int, engine: Engine, concurrency: int = 2, **caps: Any
) -> BatchOutcome:
    tasks = tmp_path / "tasks.jsonl"
    lines = [json.dumps({"id": f"t{n}", "prompt": "p", "cwd": "."}) for n in range(count)]
    tasks.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    plan = plan_batch(tasks, out)
    settings = BatchSettings(out_dir=str(out), concurrency=concurrency)
    return asyncio.run(run_batch(engine, plan, settings, BatchObserver(), **caps))


def test_a_429_holds_every_start_for_its_delay_and_halves_the_concurrency(tmp_path: Path) -> None:
    said_429: list[float] = []

    async def script(job: TaskJob, progress: ProgressCallback) -> ResultRecord:
        if job.task.id == "t0":
            said_429.append(time.monotonic())
            progress(TaskEvent(kind="retry", task_id="t0", delay_ms=300, status=429))
        await asyncio.sleep(0.05)
        return _record(job)

    engine = ScriptedEngine(script)
    outcome = _run(tmp_path, 8, engine, concurrency=4)
    assert outcome.counts == {"passed": 8}
    later = [engine.started[f"t{n}"] for n in range(4, 8)]  # t0..t3 were started at once
    assert min(later) - said_429[0] >= 0.29
    assert engine.running_at_start["t4"] <= 2  # half of 4 right after the hold
    assert engine.most_at_once <= 4


def test_the_batch_cap_stops_the_running_tasks_and_starts_no_more(tmp_path: Path) -> None:
    """Tasks run in pairs (concurrency 2), each reporting a 0.4 call once its pair is running:
    the first pair's 0.8 stays under the 1.0 cap and both pass; the second pair passes it,
    so both of its tasks are stopped and the last two never start. No step depends on timing:
    a pair waits for both of its tasks, and a stopped task waits for its stop."""
    pairs = [asyncio.Barrier(2), asyncio.Barrier(2)]

    async def script(job: TaskJob, progress: ProgressCallback) -> ResultRecord:
        number = int(job.task.id.removeprefix("t"))
        stopped = asyncio.Event()
        job.stop.on_set(lambda reason: stopped.set())
        await asyncio.wait_for(pairs[number // 2].wait(), 30)
        progress(TaskEvent(kind="turn", task_id=job.task.id, cost=0.4))
        if number < 2:
            return _record(job, cost=0.4)
        try:
            await asyncio.wait_for(stopped.wait(), 30)
        except TimeoutError:
            return _record(job, cost=0.4)  # never stopped: the counts below fail
        record = _record(job, "cancelled", cost=0.4)
        record.error = job.stop.reason
        return record

    engine = ScriptedEngine(script)
    outcome = _run(tmp_path, 6, engine, concurrency=2, max_cost=1.0)
    assert outcome.stopped == "batch budget reached"
    assert outcome.exit_code == 6
    assert outcome.counts == {"passed": 2, "cancelled": 2}
    assert outcome.not_started == 2


def test_a_run_stopped_by_what_the_batch_had_left_ends_the_batch(tmp_path: Path) -> None:
    """The daemon stops a run before a call that would pass the batch's remainder, with the
    spend still under the cap: no further call fits, so no task starts after it."""

    async def script(job: TaskJob, progress: ProgressCallback) -> ResultRecord:
        progress(TaskEvent(kind="turn", task_id=job.task.id, cost=0.4))
        return _record(job, "passed" if job.task.id == "t0" else "budget", cost=0.4)

    outcome = _run(tmp_path, 6, ScriptedEngine(script), concurrency=1, max_cost=1.0)
    assert outcome.stopped == "batch budget reached"
    assert outcome.exit_code == 6
    assert outcome.counts == {"passed": 1, "cancelled": 1}
    assert outcome.not_started == 4


def test_an_engine_that_raises_gives_an_error_record(tmp_path: Path) -> None:
    async def script(job: TaskJob, progress: ProgressCallback) -> ResultRecord:
        raise RuntimeError("node lost")

    outcome = _run(tmp_path, 2, ScriptedEngine(script))
    assert outcome.counts == {"error": 2}
    line = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert line["error"] == "scripted engine: node lost"
    assert len(line["trace_id"]) == 32


def test_the_live_line_counts_and_clears_before_each_task_line() -> None:
    out, err = io.StringIO(), io.StringIO()
    progress = TextProgress(out, err, live=True)
    progress.started(3, 0, [])
    progress.event(TaskEvent(kind="turn", task_id="a", cost=0.25), 2, 1)
    job_record = ResultRecord(id="a", status="failed", stop_reason="end_turn", exit_code=0,
                              check_exit_code=1, turns=2, cost=0.25, duration_ms=1500)  # fmt: skip
    progress.event(TaskEvent(kind="finished", task_id="a", record=job_record), 1, 1)
    assert out.getvalue() == "✗ a failed turns=2 check=1 $0.2500 1.5s\n"
    last = err.getvalue().rsplit("\r\x1b[K", 1)[1]
    assert last.startswith("done 1 · running 1 · failed 1 · queued 1 · pass 0% · $0.2500 · ETA")
