"""The result record of one task (one line of ``DIR/results.jsonl``) and ``DIR/batch.json``.

Records are msgspec Structs encoded as JSON with snake_case keys; :func:`record_to_data` and
:func:`record_from_data` turn one into plain data (``dict``) and back, for an engine that
ships results between processes or machines.

``status`` is the task's verdict:

========== =================================================================================
passed     the run ended normally (``end_turn``) and the check passed (or there is none)
failed     the run ended normally and the check exited non-zero
error      the workspace, the setup or the run failed (``stop_reason`` and ``error`` say how)
timeout    the task's ``timeout`` expired (its session ended ``cancelled``)
budget     the task's own ``max_cost`` stopped it
max_turns  the task's ``max_turns`` stopped it
cancelled  the batch stopped it: Ctrl-C, or the whole batch's cap (``error`` says which)
========== =================================================================================

A ``cancelled`` record does not count as done: the next run of the batch runs the task
again. ``--retry-failed`` also runs again those ``failed``, ``error``, ``timeout``,
``budget`` and ``max_turns``.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentd.api.tracecontext import traceparent

Status = Literal["passed", "failed", "error", "timeout", "budget", "max_turns", "cancelled"]
FINAL_STATUSES = frozenset({"passed", "failed", "error", "timeout", "budget", "max_turns"})
"""Statuses of a task that is done: a rerun skips it."""
RETRIED_STATUSES = frozenset({"failed", "error", "timeout", "budget", "max_turns"})
"""Statuses ``--retry-failed`` runs again."""


class TaskUsage(msgspec.Struct, kw_only=True):
    """Tokens and cost of a task's run."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total(self) -> int:
        """Every token counted (what ``--max-tokens`` caps)."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )


class Artifacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Paths of a task's artifacts, relative to the output folder (absent: not written)."""

    diff: str | None = None
    session: str | None = None
    check: str | None = None
    setup: str | None = None


class ResultRecord(msgspec.Struct, kw_only=True):
    """How one task ended: a line of ``results.jsonl``.

    ``exit_code`` is the code ``agentctl send`` would have exited with for the run (0 done,
    1 error, 3 max turns, 4 timeout, 6 budget, 7 cancelled, 130 interrupted; README), or 1
    when no run took place. ``check_exit_code`` is None without a check or when it did not
    run. ``duration_ms`` is the whole task (workspace, setup, run, check, artifacts).
    ``trace_id`` (32 hex digits) is the trace the run's spans are in: the batch's
    ``batch_trace_id``, so one trace holds the whole batch; ``span_id`` (16 hex digits, new
    for every attempt) is the span standing for this attempt, the parent of the run's
    ``invoke_agent`` span (the ``traceparent`` given to ``session/prompt``); ``attempt``
    counts the runs of this task id in this output folder (1 for the first).
    """

    id: str
    status: Status
    stop_reason: str
    exit_code: int
    check_exit_code: int | None = None
    turns: int = 0
    usage: TaskUsage = msgspec.field(default_factory=TaskUsage)
    cost: float = 0.0
    duration_ms: int = 0
    files_changed: list[str] = msgspec.field(default_factory=list)
    artifacts: Artifacts = msgspec.field(default_factory=Artifacts)
    session_id: str | None = None
    trace_id: str = ""
    span_id: str = ""
    error: str | None = None
    started_at: str = ""
    finished_at: str = ""
    attempt: int = 1
    engine: str = "local"
    node: str | None = None


class BatchFile(msgspec.Struct, kw_only=True):
    """``DIR/batch.json``: the batch's identity, kept across resumed runs (``batch_trace_id``
    and ``created_at`` from the first), and what the latest run was given."""

    batch_trace_id: str
    created_at: str
    tasks_file: str
    engine: str = "local"
    tasks: int = 0
    shard: str | None = None
    invalid_lines: list[dict[str, Any]] = msgspec.field(default_factory=list)
    updated_at: str = ""


def traceparent_of(trace_id: str, span_id: str) -> str | None:
    """The ``traceparent`` naming ``span_id`` in ``trace_id`` (sampled); None without both."""
    return traceparent(trace_id, span_id) if trace_id and span_id else None


def record_to_data(record: ResultRecord) -> dict[str, Any]:
    """The record as plain data (JSON types only)."""
    data: dict[str, Any] = msgspec.to_builtins(record)
    return data


def record_from_data(data: dict[str, Any]) -> ResultRecord:
    """A record back from :func:`record_to_data`'s form (``msgspec.ValidationError`` if not)."""
    return msgspec.convert(data, ResultRecord)


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(ResultRecord)


def encode_record(record: ResultRecord) -> bytes:
    """One ``results.jsonl`` line, newline included."""
    return _ENCODER.encode(record) + b"\n"


def decode_record(line: bytes) -> ResultRecord:
    """A ``results.jsonl`` line as a record (``msgspec`` errors when it is not one)."""
    return _DECODER.decode(line)
