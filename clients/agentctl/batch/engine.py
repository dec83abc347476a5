"""The contract a batch engine implements (the local engine; a Ray engine on the same terms).

The scheduler (:mod:`agentctl.batch.runner`) owns the task file, resumption, shards, the
whole batch's budget and pace, Ctrl-C, ``results.jsonl`` and the progress output. An engine
only runs one task at a time per call, as often at once as the scheduler asks:

1. :meth:`Engine.open` once, with the batch's :class:`BatchSettings`;
2. :meth:`Engine.run_task` per task (up to ``settings.concurrency`` at once), given a
   :class:`TaskJob` and a :data:`ProgressCallback`; it prepares the task's workspace, runs
   the agent, runs the check, writes the artifacts under ``settings.out_dir/ID/`` and returns
   the :class:`~agentctl.batch.records.ResultRecord` (the scheduler writes it to
   ``results.jsonl``; an engine never does). It does not raise for a task's failure: a
   failed workspace, setup or run is a record with status ``error``. When ``job.stop`` is
   set (Ctrl-C, the batch's cap) it stops the run (the session ends ``cancelled``) and
   returns the record with status ``cancelled`` and ``job.stop.reason`` as its error;
3. :meth:`Engine.close` once at the end (also after Ctrl-C).

A remote engine reuses :func:`agentctl.batch.single.run_one_task` (one task end to end on
the machine it runs on, plain data in and out) and, for its parts,
:func:`agentctl.batch.workspace.prepare_workspace` / ``collect_diff`` and
:func:`agentctl.batch.execute.execute_task`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import msgspec

from agentctl.batch.records import ResultRecord
from agentctl.batch.tasks import Task

EventKind = Literal["started", "turn", "retry", "finished"]


class BatchSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What every task of the batch shares (plain data: it can cross to a worker).

    ``out_dir`` is absolute. ``socket``: the shared daemon's socket (None: the default, started
    when none runs). ``provider``/``model``/``permission``: defaults for tasks that name none.
    ``check_timeout``: seconds a setup or check command may take. ``batch_trace_id``: see
    ``batch.json``. ``env``: names of variables every task gets (besides its own ``env``).
    """

    out_dir: str
    concurrency: int = 1
    engine: str = "local"
    socket: str | None = None
    provider: str | None = None
    model: str | None = None
    permission: Literal["auto", "ask", "read-only"] = "auto"
    check_timeout: float = 600.0
    batch_trace_id: str = ""
    env: list[str] = []


class TaskCaps(msgspec.Struct, frozen=True, kw_only=True):
    """Spending caps for one run: the task's own ``max_cost`` and what is left of the
    batch's ``--max-cost`` / ``--max-tokens`` when it starts, whichever is lower."""

    max_cost: float | None = None
    max_tokens: int | None = None


class StopRequest:
    """Asks a running task to stop; set once (later reasons are ignored). Thread-safe to
    read; set it from the scheduler's event loop."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._callbacks: list[Callable[[str], None]] = []

    def set(self, reason: str) -> None:
        """Stop with ``reason`` (``interrupted``, ``batch budget reached``, …)."""
        if self.reason is not None:
            return
        self.reason = reason
        for callback in self._callbacks:
            callback(reason)

    def on_set(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(reason)`` when set (at once if it already is)."""
        if self.reason is not None:
            callback(self.reason)
        else:
            self._callbacks.append(callback)


class TaskJob(msgspec.Struct, kw_only=True):
    """One task to run now: the task, the batch's settings, its caps, its trace id and
    attempt number (see :class:`~agentctl.batch.records.ResultRecord`) and its stop request."""

    task: Task
    settings: BatchSettings
    caps: TaskCaps = msgspec.field(default_factory=TaskCaps)
    trace_id: str
    span_id: str = ""
    attempt: int = 1
    stop: Any = msgspec.field(default_factory=StopRequest)
    """A :class:`StopRequest` (typed ``Any``: it is not data and never encoded)."""


class TaskEvent(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Progress of one task, for the live line, ``--json`` and the batch's budget and pace.

    ``started``: the run began (``session_id``). ``turn``: a model call ended; ``cost`` and
    ``tokens`` are that call's (added to the batch's spend at once). ``retry``: the provider
    asked to wait (``delay_ms``; ``status`` 429 when it said so): the batch backs off.
    ``finished``: ``record`` is the task's result.
    """

    kind: EventKind
    task_id: str
    session_id: str | None = None
    cost: float = 0.0
    tokens: int = 0
    delay_ms: int = 0
    status: int | None = None
    error: str | None = None
    record: ResultRecord | None = None


ProgressCallback = Callable[[TaskEvent], None]
"""Receives a task's :class:`TaskEvent` s, on the scheduler's event loop (an engine whose
tasks run elsewhere delivers them there)."""


class Engine(abc.ABC):
    """Runs tasks for the scheduler (see the module docstring)."""

    name: ClassVar[str] = ""

    def default_concurrency(self) -> int:
        """How many tasks at once when ``--concurrency`` is not given."""
        return 1

    async def open(self, settings: BatchSettings) -> None:  # noqa: B027 - optional hook
        """Get ready to run tasks (connect, start a daemon, join a cluster)."""

    @abc.abstractmethod
    async def run_task(self, job: TaskJob, progress: ProgressCallback) -> ResultRecord:
        """Run ``job`` end to end; return its record (never raise for the task's failure)."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what :meth:`open` took; called once, also after Ctrl-C."""
