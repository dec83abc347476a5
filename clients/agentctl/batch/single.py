"""One task end to end on this machine, plain data in and out: what a remote worker (a Ray
task) calls. It prepares the workspace, runs the task against this machine's shared daemon
(started when none runs) or a private ``--stdio`` one, writes the artifacts under
``settings["out_dir"]/ID/`` and returns the record as a ``dict``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import msgspec

from agentctl.batch.engine import BatchSettings, StopRequest, TaskCaps, TaskEvent, TaskJob
from agentctl.batch.execute import execute_task
from agentctl.batch.records import record_to_data
from agentctl.batch.tasks import Task
from agentctl.client import AgentClient, connect, spawn_stdio
from agentd.api.tracecontext import new_span_id

DaemonChoice = Literal["shared", "private"]


async def run_one_task_async(
    task: dict[str, Any],
    settings: dict[str, Any],
    *,
    trace_id: str,
    span_id: str = "",
    attempt: int = 1,
    caps: dict[str, Any] | None = None,
    daemon: DaemonChoice = "shared",
    progress: Callable[[dict[str, Any]], None] | None = None,
    node: str | None = None,
    stop: StopRequest | None = None,
) -> dict[str, Any]:
    """:func:`run_one_task` inside a running event loop, with an optional ``stop``."""
    job = TaskJob(
        task=msgspec.convert(task, Task),
        settings=msgspec.convert(settings, BatchSettings),
        caps=msgspec.convert(caps or {}, TaskCaps),
        trace_id=trace_id,
        span_id=span_id or new_span_id(),
        attempt=attempt,
        stop=stop or StopRequest(),
    )

    def forward(event: TaskEvent) -> None:
        if progress is not None:
            progress(msgspec.to_builtins(event))

    client = await _client(daemon, job.settings)
    try:
        record = await execute_task(client, job, forward, engine=job.settings.engine, node=node)
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    return record_to_data(record)


async def _client(daemon: DaemonChoice, settings: BatchSettings) -> AgentClient:
    if daemon == "private":
        Path(settings.out_dir).mkdir(parents=True, exist_ok=True)
        return await spawn_stdio(cwd=settings.out_dir, name="agentctl-batch")
    return await connect(settings.socket, autostart=True, name="agentctl-batch")


def run_one_task(
    task: dict[str, Any],
    settings: dict[str, Any],
    *,
    trace_id: str,
    span_id: str = "",
    attempt: int = 1,
    caps: dict[str, Any] | None = None,
    daemon: DaemonChoice = "shared",
    progress: Callable[[dict[str, Any]], None] | None = None,
    node: str | None = None,
) -> dict[str, Any]:
    """Run one task (``msgspec.to_builtins`` of a :class:`~agentctl.batch.tasks.Task`) with
    the batch's ``settings`` (of a :class:`~agentctl.batch.engine.BatchSettings`) and
    ``caps`` (of a :class:`~agentctl.batch.engine.TaskCaps`) on this machine; return the
    record (:func:`~agentctl.batch.records.record_to_data`). ``progress`` gets each
    :class:`~agentctl.batch.engine.TaskEvent` as a ``dict``. Blocks; runs its own event loop
    (call it from a thread or process that has none). Raises
    :class:`~agentctl.client.DaemonUnavailable` when no daemon can be reached or started."""
    return asyncio.run(
        run_one_task_async(
            task,
            settings,
            trace_id=trace_id,
            span_id=span_id,
            attempt=attempt,
            caps=caps,
            daemon=daemon,
            progress=progress,
            node=node,
        )
    )
