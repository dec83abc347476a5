"""``agentctl batch``: the command's entry point (:func:`batch_main`).

``agentctl batch TASKS.jsonl --out DIR …`` plans the run
(:func:`~agentctl.batch.runner.plan_batch`), picks the engine (``local``; ``ray`` imported
only when asked for) and runs it with the progress output the flags ask for. The first
Ctrl-C (or SIGTERM) stops the running tasks
cleanly — their sessions end ``cancelled`` and their records say so — and exits 130; a
second Ctrl-C exits at once (every file is still whole: lines and artifacts are written in
one piece). ``agentctl batch report DIR`` is :func:`~agentctl.batch.report.report_main`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from agentctl.batch.engine import BatchSettings, Engine
from agentctl.batch.local import LocalEngine
from agentctl.batch.progress import JsonProgress, TextProgress
from agentctl.batch.report import report_main
from agentctl.batch.runner import BatchObserver, BatchPlan, plan_batch, run_batch
from agentctl.client import DaemonUnavailable
from agentctl.options import BatchOptions
from agentctl.run import outcome


class BatchUsageError(Exception):
    """A mistake on the command line or in the task file (exit 2)."""


def batch_main(options: BatchOptions) -> int:
    """Run ``agentctl batch``; return its exit code."""
    try:
        if options.words[0] == "report":
            if len(options.words) != 2:
                raise BatchUsageError("usage: agentctl batch report DIR")
            return report_main(Path(options.words[1]), options)
        return _run(options)
    except BatchUsageError as exc:
        sys.stderr.write(f"agentctl batch: {exc}\n")
        return outcome.USAGE_ERROR


def _run(options: BatchOptions) -> int:
    if len(options.words) != 1:
        raise BatchUsageError("give one task file (or: batch report DIR)")
    if options.out is None:
        raise BatchUsageError("--out DIR is required")
    if options.engine != "ray":
        for flag, value in _RAY_FLAGS.items():
            if getattr(options, value) is not None:
                raise BatchUsageError(f"{flag} is for --engine ray")
    tasks_file, out_dir = Path(options.words[0]), Path(options.out).resolve()
    try:
        plan = plan_batch(
            tasks_file,
            out_dir,
            shard=options.shard,
            retry_failed=options.retry_failed,
            engine=options.engine,
        )
    except OSError as exc:
        raise BatchUsageError(f"{tasks_file}: {exc.strerror or exc}") from None
    if options.strict and plan.invalid:
        for error in plan.invalid:
            sys.stderr.write(f"agentctl batch: {tasks_file}: {error}\n")
        raise BatchUsageError(f"{len(plan.invalid)} bad line(s); nothing was run (--strict)")
    engine = make_engine(options)
    settings = _settings(options, out_dir, engine, plan.batch.batch_trace_id if plan.batch else "")
    return asyncio.run(_drive(engine, plan, settings, options))


_RAY_FLAGS = {
    "--address": "address", "--ray-num-cpus": "ray_num_cpus", "--ray-resources": "ray_resources",
    "--max-retries": "max_retries", "--ray-work-dir": "ray_work_dir",
}  # fmt: skip


def make_engine(options: BatchOptions) -> Engine:
    """The engine ``--engine`` names (Ray imported only for ``ray``)."""
    if options.engine == "ray":
        try:
            from agentctl.batch.ray_engine import RayEngine
        except ImportError as exc:
            raise BatchUsageError(
                f"--engine ray needs Ray: pip install 'agentd[ray]' ({exc})"
            ) from None
        engine: Engine = RayEngine(options)
        return engine
    return LocalEngine()


def _settings(options: BatchOptions, out_dir: Path, engine: Engine, trace_id: str) -> BatchSettings:
    socket = options.socket
    if socket is None and os.environ.get("AGENTD_SOCKET"):
        socket = os.environ["AGENTD_SOCKET"]
    return BatchSettings(
        out_dir=str(out_dir),
        concurrency=options.concurrency or engine.default_concurrency(),
        engine=engine.name,
        socket=socket,
        provider=options.provider,
        model=options.model,
        permission=options.permission or "auto",
        check_timeout=options.check_timeout or 600.0,
        batch_trace_id=trace_id,
        env=list(options.env or []),
    )


async def _drive(
    engine: Engine, plan: BatchPlan, settings: BatchSettings, options: BatchOptions
) -> int:
    observer: BatchObserver = JsonProgress() if options.json else TextProgress()
    try:
        result = await run_batch(
            engine,
            plan,
            settings,
            observer,
            max_cost=options.max_cost,
            max_tokens=options.max_tokens,
            rate=options.rate,
            on_interrupt=interrupts,
        )
    except DaemonUnavailable as exc:
        sys.stderr.write(f"agentctl batch: {exc}\n")
        return outcome.AGENT_ERROR
    return result.exit_code


@contextlib.contextmanager
def interrupts(stop: Callable[[str], None]) -> Iterator[None]:
    """Within the block, the first SIGINT or SIGTERM calls ``stop("interrupted")``; a second
    SIGINT exits at once with 130."""
    loop = asyncio.get_running_loop()
    presses = 0

    def on_signal() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            stop("interrupted")
            return
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os._exit(outcome.INTERRUPTED)

    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, on_signal)
    try:
        yield
    finally:
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(number)
