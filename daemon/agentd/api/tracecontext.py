"""W3C Trace Context values for ``session/prompt``'s ``traceparent``, for a driver that
starts many runs and wants them in one trace (a batch): one trace id for the whole batch
(:func:`new_trace_id`), and per run a ``traceparent`` naming the span the run's
``invoke_agent`` span hangs under (:func:`traceparent`: the driver's own span when it exports
one, else a fresh id that stands for the batch). No OpenTelemetry needed."""

from __future__ import annotations

import re
import secrets

_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


def new_trace_id() -> str:
    """A random 32-hex-digit trace id (never all zeros)."""
    return _nonzero(16)


def new_span_id() -> str:
    """A random 16-hex-digit span id (never all zeros)."""
    return _nonzero(8)


def traceparent(trace_id: str, span_id: str | None = None, *, sampled: bool = True) -> str:
    """``00-TRACE-SPAN-FLAGS`` for ``trace_id`` under ``span_id`` (None: a new span id);
    ValueError for ids that are not lowercase hex of the right length or all zeros."""
    span = span_id or new_span_id()
    value = f"00-{trace_id}-{span}-{'01' if sampled else '00'}"
    if trace_id_of(value) is None:
        raise ValueError(f"not a valid trace id / span id: {trace_id!r}, {span!r}")
    return value


def trace_id_of(value: str) -> str | None:
    """The trace id of a ``traceparent`` value; None when it is not a valid one."""
    found = _TRACEPARENT.match(value)
    if found is None or set(found[1]) == {"0"} or set(found[2]) == {"0"}:
        return None
    return found[1]


def _nonzero(size: int) -> str:
    while True:
        value = secrets.token_hex(size)
        if set(value) != {"0"}:
            return value
