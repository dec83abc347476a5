"""How a run ended, as the client saw it, and the exit code that reports it.

Exit codes and the stop reason reported with each (stable, documented in README.md): one stop
reason per exit code, so the ``result`` line, the step summary and the Action's outputs never
contradict each other.

==== ============== ===========================================================
0    end_turn       the run ended normally
1    error          agent or provider error, or the daemon failed / went away
2    error          usage or configuration error (bad flag, unknown session, …)
3    max_turns      the run hit ``--max-turns``
4    timeout        ``--timeout`` expired (the run was cancelled)
5    refused        a tool call needed permission and it was refused
6    budget         the run stopped at its ``--max-cost`` / ``--max-tokens`` budget
7    cancelled      the run was cancelled from elsewhere (``agentctl cancel``, another client)
8    blocked        a ``user_prompt`` hook blocked the prompt (no model call was made)
9    (none)         ``agentctl rewind`` met conflicts and moved nothing (not a run's end)
130  interrupted    interrupted (Ctrl-C)
141  (none)         stdout was closed (``| head -1``); the run is not cancelled
==== ============== ===========================================================
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentctl.run.exitcodes import (
    AGENT_ERROR,
    BLOCKED,
    BUDGET,
    CANCELLED,
    INTERRUPTED,
    MAX_TURNS,
    OK,
    OUTPUT_CLOSED,
    PERMISSION_REFUSED,
    REWIND_CONFLICTS,
    TIMEOUT,
    USAGE_ERROR,
)

__all__ = [
    "AGENT_ERROR",
    "BLOCKED",
    "BUDGET",
    "CANCELLED",
    "INTERRUPTED",
    "MAX_TURNS",
    "OK",
    "OUTPUT_CLOSED",
    "PERMISSION_REFUSED",
    "REWIND_CONFLICTS",
    "TIMEOUT",
    "USAGE_ERROR",
    "RunSummary",
    "error_result_line",
    "exit_code_for",
    "exit_code_for_rpc_error",
]

STOP_REASONS = {
    OK: "end_turn",
    AGENT_ERROR: "error",
    USAGE_ERROR: "error",
    MAX_TURNS: "max_turns",
    TIMEOUT: "timeout",
    PERMISSION_REFUSED: "refused",
    BUDGET: "budget",
    CANCELLED: "cancelled",
    BLOCKED: "blocked",
    INTERRUPTED: "interrupted",
}
"""The stop reason reported with each exit code (the table in the module docstring)."""

COST_DECIMALS = 6
"""Cost is reported in USD rounded to millionths (a cent's ten-thousandths)."""


class RunSummary(msgspec.Struct):
    """The end of one ``session/prompt`` run plus what happened on the client's side.

    ``usage`` is the wire form (camelCase keys) of :class:`agentd.protocol.content.Usage`.
    ``refused`` counts permission requests answered with a rejection during the run.
    """

    session_id: str
    stop_reason: str
    turns: int = 0
    usage: dict[str, Any] = msgspec.field(default_factory=dict)
    cost: float = 0.0
    duration_ms: int = 0
    error: str | None = None
    interrupted: bool = False
    timed_out: bool = False
    refused: int = 0
    session_file: str | None = None

    @property
    def exit_code(self) -> int:
        """The process exit code for this run (see the module docstring)."""
        return exit_code_for(self)

    @property
    def reported_stop_reason(self) -> str:
        """The stop reason that goes with :attr:`exit_code` (``stop_reason`` is the daemon's:
        a refused call can end a run the daemon calls ``end_turn``, a timeout one it calls
        ``cancelled``)."""
        return STOP_REASONS.get(self.exit_code, self.stop_reason)

    @property
    def rounded_cost(self) -> float:
        return round(self.cost, COST_DECIMALS)

    def result_line(self) -> dict[str, Any]:
        """The final ``{"type": "result", …}`` line of ``agentctl send --json``."""
        line: dict[str, Any] = {
            "type": "result",
            "stopReason": self.reported_stop_reason,
            "sessionId": self.session_id,
            "turns": self.turns,
            "usage": self.usage,
            "cost": self.rounded_cost,
            "durationMs": self.duration_ms,
            "exitCode": self.exit_code,
        }
        if self.error is not None:
            line["error"] = self.error
        if self.timed_out:
            line["timedOut"] = True
        if self.interrupted:
            line["interrupted"] = True
        if self.refused:
            line["permissionsRefused"] = self.refused
        if self.session_file is not None:
            line["sessionFile"] = self.session_file
        return line


def exit_code_for(summary: RunSummary) -> int:
    """Map a run's ending to an exit code.

    The client's own reasons win (Ctrl-C, then ``--timeout``), then an error, then a refused
    permission (it may have made the agent stop or change course), then the stop reason.
    """
    if summary.interrupted:
        return INTERRUPTED
    if summary.timed_out:
        return TIMEOUT
    if summary.stop_reason == "error":
        return AGENT_ERROR
    if summary.refused:
        return PERMISSION_REFUSED
    if summary.stop_reason == "max_turns":
        return MAX_TURNS
    if summary.stop_reason == "budget":
        return BUDGET
    if summary.stop_reason == "cancelled":
        return CANCELLED
    if summary.stop_reason == "blocked":
        return BLOCKED
    return OK


RPC_USAGE_CODES = frozenset({-32602, -32601, -32003, -32005, -32006})
"""JSON-RPC error codes that mean the request itself was wrong (exit 2): invalid params,
unknown method, unknown session, configuration error, session id already used."""


def exit_code_for_rpc_error(code: int) -> int:
    """Exit code for a failed call: 2 for caller mistakes, 1 for everything else."""
    return USAGE_ERROR if code in RPC_USAGE_CODES else AGENT_ERROR


def error_result_line(
    message: str, exit_code: int, session_id: str | None = None
) -> dict[str, Any]:
    """The ``result`` line printed in ``--json`` mode when no run could take place."""
    return {
        "type": "result",
        "stopReason": "error",
        "sessionId": session_id,
        "turns": 0,
        "usage": {},
        "cost": 0.0,
        "durationMs": 0,
        "exitCode": exit_code,
        "error": message,
    }
