"""The daemon's own counts of what its sessions did, for ``daemon/metrics`` and the web
server's ``/metrics`` (always on; no OpenTelemetry): runs started, active and ended (by stop
reason), tokens, cost, tool calls, approvals waited for, errors by type.

Every run counts, a subagent's too (its child session's run). Updated by
:meth:`Counters.observe` from the sessions' events (:class:`~agentd.telemetry.scope.Observer`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agentd.protocol.content import AssistantMessage
from agentd.protocol.events import (
    AgentEnd,
    AgentStart,
    ErrorEvent,
    Event,
    MessageEnd,
    PermissionRequest,
    PermissionResolved,
    ToolExecutionEnd,
)
from agentd.telemetry.scope import RunScope


class Counters:
    """Counts since the daemon started (see the module docstring)."""

    def __init__(self) -> None:
        self.runs_started = 0
        self.runs_ended: dict[str, int] = {}
        """Ended runs by stop reason."""
        self._finished = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost = 0.0
        self.tool_calls = 0
        self.tool_errors = 0
        self.approvals = 0
        self.approval_wait_s = 0.0
        self.errors: dict[str, int] = {}
        """Errors by type: the ``error`` events' codes (``provider_error``, ``store_error``,
        ``internal_error``) and, added by the daemon, ``rpc_internal_error``."""
        self._waiting: dict[tuple[str, str], float] = {}

    @property
    def runs_active(self) -> int:
        """Runs started and not ended yet (two ints: safe to read from the metric exporter's
        thread)."""
        return self.runs_started - self._finished

    @property
    def approvals_pending(self) -> int:
        """Tool calls waiting for an approval now."""
        return len(self._waiting)

    def error(self, kind: str) -> None:
        """Count one error of ``kind``."""
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def observe(self, scope: RunScope, event: Event) -> None:
        """Count what ``event`` tells (most events tell nothing here: one dict lookup)."""
        count = _COUNTS.get(type(event))
        if count is not None:
            count(self, scope, event)

    def _message_end(self, scope: RunScope, event: MessageEnd) -> None:
        message = event.message
        if isinstance(message, AssistantMessage):
            usage = message.usage
            self.input_tokens += usage.input_tokens
            self.output_tokens += usage.output_tokens
            self.cost += usage.cost

    def _tool_end(self, scope: RunScope, event: ToolExecutionEnd) -> None:
        self.tool_calls += 1
        self.tool_errors += event.is_error

    def _run_start(self, scope: RunScope, event: AgentStart) -> None:
        self.runs_started += 1

    def _run_end(self, scope: RunScope, event: AgentEnd) -> None:
        self.runs_ended[event.stop_reason] = self.runs_ended.get(event.stop_reason, 0) + 1
        self._finished += 1

    def _error(self, scope: RunScope, event: ErrorEvent) -> None:
        self.error(event.code)

    def _asked(self, scope: RunScope, event: PermissionRequest) -> None:
        self._waiting[(scope.session_id, event.tool_call_id)] = time.monotonic()

    def _answered(self, scope: RunScope, event: PermissionResolved) -> None:
        asked = self._waiting.pop((scope.session_id, event.tool_call_id), None)
        if asked is not None:
            self.approvals += 1
            self.approval_wait_s += time.monotonic() - asked


_COUNTS: dict[type, Callable[[Counters, RunScope, Any], None]] = {
    MessageEnd: Counters._message_end,
    ToolExecutionEnd: Counters._tool_end,
    AgentStart: Counters._run_start,
    AgentEnd: Counters._run_end,
    ErrorEvent: Counters._error,
    PermissionRequest: Counters._asked,
    PermissionResolved: Counters._answered,
}
