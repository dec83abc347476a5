"""The daemon's own counts of what its sessions did, for ``daemon/metrics`` and the web
server's ``/metrics`` (always on; no OpenTelemetry): runs started, active and ended (by stop
reason), tokens, cost, tool calls, approvals waited for, errors by type.

Every run counts, a subagent's too (its child session's run). Updated by
:meth:`Counters.observe` from the sessions' events (:class:`~agentd.telemetry.scope.Observer`).
"""

from __future__ import annotations

import time

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
        self._asked: dict[tuple[str, str], float] = {}

    @property
    def runs_active(self) -> int:
        """Runs started and not ended yet."""
        return self.runs_started - sum(self.runs_ended.values())

    @property
    def approvals_pending(self) -> int:
        """Tool calls waiting for an approval now."""
        return len(self._asked)

    def error(self, kind: str) -> None:
        """Count one error of ``kind``."""
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def observe(self, scope: RunScope, event: Event) -> None:
        """Count what ``event`` tells (most events tell nothing here)."""
        if isinstance(event, MessageEnd):
            message = event.message
            if isinstance(message, AssistantMessage):
                usage = message.usage
                self.input_tokens += usage.input_tokens
                self.output_tokens += usage.output_tokens
                self.cost += usage.cost
        elif isinstance(event, ToolExecutionEnd):
            self.tool_calls += 1
            self.tool_errors += event.is_error
        elif isinstance(event, AgentStart):
            self.runs_started += 1
        elif isinstance(event, AgentEnd):
            reason = event.stop_reason
            self.runs_ended[reason] = self.runs_ended.get(reason, 0) + 1
        elif isinstance(event, ErrorEvent):
            self.error(event.code)
        elif isinstance(event, PermissionRequest):
            self._asked[(scope.session_id, event.tool_call_id)] = time.monotonic()
        elif isinstance(event, PermissionResolved):
            asked = self._asked.pop((scope.session_id, event.tool_call_id), None)
            if asked is not None:
                self.approvals += 1
                self.approval_wait_s += time.monotonic() - asked
