"""One task end to end against a connected daemon: :func:`execute_task`.

Workspace → ``setup`` → a session in the workspace (sandbox ``workspace``) running the prompt
→ the session file copied to ``OUT/ID/session.jsonl`` and the session unloaded → ``check``
(only after a run that ended normally) → ``OUT/ID/diff.patch`` → the record. Every failure
becomes the record's ``status``/``error``; nothing here raises for a task's failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import time
from pathlib import Path
from typing import Any

import msgspec

from agentctl.batch.commands import command_env, run_command
from agentctl.batch.engine import ProgressCallback, TaskEvent, TaskJob
from agentctl.batch.records import Artifacts, ResultRecord, Status, TaskUsage, traceparent_of
from agentctl.batch.store import now_iso, write_atomic
from agentctl.batch.workspace import Workspace, WorkspaceError, collect_diff, prepare_workspace
from agentctl.client import AgentClient
from agentctl.run import outcome
from agentctl.run.drive import StopSignal, drive_run
from agentctl.run.outcome import RunSummary
from agentd.errors import RpcError
from agentd.protocol.content import AssistantMessage
from agentd.protocol.events import MessageEnd, Retry, SessionEvent
from agentd.protocol.methods import SessionIdParams, SessionInfo, SessionNewParams

_STATUS_CODE = re.compile(r"\b(429|5\d\d)\b")


class _Attempt:
    """The record being built for one task, and where its artifacts go."""

    def __init__(self, job: TaskJob, engine: str, node: str | None) -> None:
        self.job = job
        self.task = job.task
        self.out = Path(job.settings.out_dir)
        self.folder = self.out / self.task.id
        self.started = time.monotonic()
        self.record = ResultRecord(
            id=self.task.id,
            status="error",
            stop_reason="error",
            exit_code=outcome.AGENT_ERROR,
            trace_id=job.trace_id,
            span_id=job.span_id,
            attempt=job.attempt,
            started_at=now_iso(),
            engine=engine,
            node=node,
        )
        self.artifacts = Artifacts()

    def relative(self, name: str) -> str:
        return f"{self.task.id}/{name}"

    def finish(self, status: Status, error: str | None = None) -> ResultRecord:
        record = self.record
        record.status = status
        if error is not None:
            record.error = error
        record.artifacts = self.artifacts
        record.duration_ms = int((time.monotonic() - self.started) * 1000)
        record.finished_at = now_iso()
        return record


async def execute_task(
    client: AgentClient,
    job: TaskJob,
    progress: ProgressCallback,
    *,
    engine: str = "local",
    node: str | None = None,
) -> ResultRecord:
    """Run ``job`` on ``client``'s daemon; return its record (see the module docstring).
    ``job.stop`` stops it at any step (status ``cancelled``, ``error`` = the reason)."""
    attempt = _Attempt(job, engine, node)
    attempt.folder.mkdir(parents=True, exist_ok=True)
    try:
        workspace = await asyncio.to_thread(prepare_workspace, job.task, job.settings.out_dir)
    except WorkspaceError as exc:
        return attempt.finish("error", f"workspace: {exc}")
    env = command_env(job.task.id, [*job.settings.env, *job.task.env])
    if job.task.setup is not None:
        setup = await _command(attempt, "setup", job.task.setup, workspace, env)
        if setup != 0:
            if setup is None:
                return attempt.finish("cancelled", job.stop.reason)
            return attempt.finish("error", f"setup exited with {setup}")
    if job.stop.reason is not None:
        return attempt.finish("cancelled", job.stop.reason)
    summary = await _run_agent(client, attempt, workspace, progress)
    if summary is None:
        return await _with_diff(attempt, workspace, "error")
    status = _status_of(summary, job)
    if status == "passed" and job.task.check is not None:
        check = await _command(attempt, "check", job.task.check, workspace, env)
        attempt.record.check_exit_code = check
        if check is None:
            status = "cancelled"
            attempt.record.error = job.stop.reason
        elif check != 0:
            status = "failed"
    return await _with_diff(attempt, workspace, status)


async def _command(
    attempt: _Attempt, name: str, command: str, workspace: Workspace, env: dict[str, str]
) -> int | None:
    output = attempt.folder / f"{name}.txt"
    setattr(attempt.artifacts, name, attempt.relative(output.name))
    timeout = attempt.job.settings.check_timeout
    return await run_command(command, workspace.path, output, env, timeout, attempt.job.stop)


async def _with_diff(attempt: _Attempt, workspace: Workspace, status: Status) -> ResultRecord:
    try:
        patch, files = await asyncio.to_thread(collect_diff, workspace)
    except WorkspaceError as exc:
        return attempt.finish("error", f"diff: {exc}")
    await asyncio.to_thread(write_atomic, attempt.folder / "diff.patch", patch)
    attempt.artifacts.diff = attempt.relative("diff.patch")
    attempt.record.files_changed = files
    return attempt.finish(status)


def _status_of(summary: RunSummary, job: TaskJob) -> Status:
    code = summary.exit_code
    if code in (outcome.OK, outcome.PERMISSION_REFUSED):
        return "passed"
    if job.stop.reason is not None:
        return "cancelled"
    statuses: dict[int, Status] = {
        outcome.TIMEOUT: "timeout",
        outcome.BUDGET: "budget",
        outcome.MAX_TURNS: "max_turns",
        outcome.CANCELLED: "cancelled",
    }
    return statuses.get(code, "error")


def _session_params(job: TaskJob, workspace: Workspace) -> SessionNewParams:
    task, settings = job.task, job.settings
    return SessionNewParams(
        cwd=workspace.path,
        provider=task.provider or settings.provider,
        model=task.model or settings.model,
        permission_mode=task.permission or settings.permission,
        max_turns=task.max_turns,
        sandbox="workspace",
        title=f"batch {task.id}",
    )


async def _run_agent(
    client: AgentClient, attempt: _Attempt, workspace: Workspace, progress: ProgressCallback
) -> RunSummary | None:
    """Create the session, run the prompt, keep the session file, unload the session.
    None when the session could not be made (the record says why)."""
    job, record = attempt.job, attempt.record
    try:
        info = await client.sessions.create(_session_params(job, workspace))
    except (RpcError, OSError) as exc:
        record.error = f"session/new: {exc}"
        return None
    record.session_id = info.session_id
    progress(TaskEvent(kind="started", task_id=job.task.id, session_id=info.session_id))
    stop = StopSignal()
    job.stop.on_set(lambda reason: stop.set("interrupted"))
    try:
        summary = await drive_run(
            client,
            info.session_id,
            job.task.prompt,
            _EventView(job.task.id, progress),
            timeout=job.task.timeout,
            stop=stop,
            max_turns=job.task.max_turns,
            budget=_budget(job),
            traceparent=traceparent_of(job.trace_id, job.span_id),
        )
    except (RpcError, OSError) as exc:
        record.error = f"session/prompt: {exc}"
        summary = None
    await _keep_session(client, attempt, info)
    if summary is not None:
        _take_summary(record, summary, job)
    return summary


def _budget(job: TaskJob) -> dict[str, Any]:
    caps = job.caps
    budget: dict[str, Any] = {}
    if caps.max_cost is not None:
        budget["max_cost"] = caps.max_cost
    if caps.max_tokens is not None:
        budget["max_tokens"] = caps.max_tokens
    return budget


def _take_summary(record: ResultRecord, summary: RunSummary, job: TaskJob) -> None:
    record.stop_reason = summary.stop_reason
    record.exit_code = summary.exit_code
    record.turns = summary.turns
    record.cost = summary.rounded_cost
    usage = summary.usage
    record.usage = TaskUsage(
        input_tokens=int(usage.get("inputTokens", 0)),
        output_tokens=int(usage.get("outputTokens", 0)),
        cache_read_tokens=int(usage.get("cacheReadTokens", 0)),
        cache_write_tokens=int(usage.get("cacheWriteTokens", 0)),
    )
    if job.stop.reason is not None and summary.exit_code != outcome.OK:
        record.stop_reason = "cancelled"
        record.error = job.stop.reason
    elif summary.timed_out:
        record.error = f"timed out after {job.task.timeout:g} s"
    elif summary.error:
        record.error = summary.error


async def _keep_session(client: AgentClient, attempt: _Attempt, info: SessionInfo) -> None:
    """Copy the session file into the artifacts, then unload the session from the daemon."""
    if info.path:
        target = attempt.folder / "session.jsonl"
        with contextlib.suppress(OSError):
            await asyncio.to_thread(_copy_atomic, Path(info.path), target)
            attempt.artifacts.session = attempt.relative(target.name)
    with contextlib.suppress(RpcError, OSError):
        await client.sessions.close_session(SessionIdParams(session_id=info.session_id))


def _copy_atomic(source: Path, target: Path) -> None:
    temporary = target.with_name(f".{target.name}.tmp")
    shutil.copyfile(source, temporary)
    temporary.replace(target)


class _EventView:
    """Turns a run's events into :class:`TaskEvent` s: ``turn`` per assistant message
    (its cost and tokens), ``retry`` per provider retry (HTTP status when it names one)."""

    def __init__(self, task_id: str, progress: ProgressCallback) -> None:
        self.task_id = task_id
        self.progress = progress

    def __call__(self, data: bytes, event: SessionEvent | None) -> None:
        if event is None:
            return
        inner = event.event
        if isinstance(inner, MessageEnd) and isinstance(inner.message, AssistantMessage):
            usage = inner.message.usage
            tokens = msgspec.structs.asdict(usage)
            total = sum(v for k, v in tokens.items() if k != "cost")
            self.progress(
                TaskEvent(kind="turn", task_id=self.task_id, cost=usage.cost, tokens=int(total))
            )
        elif isinstance(inner, Retry):
            found = _STATUS_CODE.search(inner.error)
            self.progress(
                TaskEvent(
                    kind="retry",
                    task_id=self.task_id,
                    delay_ms=inner.delay_ms,
                    status=int(found[1]) if found else None,
                    error=inner.error,
                )
            )
