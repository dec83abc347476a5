"""Exit codes: how a run's ending and client-side events map to the documented codes."""

from __future__ import annotations

import pytest

from agentctl.run import outcome
from agentctl.run.outcome import RunSummary, error_result_line, exit_code_for_rpc_error


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"stop_reason": "end_turn"}, 0),
        ({"stop_reason": "error"}, 1),
        ({"stop_reason": "max_turns"}, 3),
        ({"stop_reason": "cancelled", "timed_out": True}, 4),
        ({"stop_reason": "end_turn", "refused": 1}, 5),
        ({"stop_reason": "max_turns", "refused": 2}, 5),
        ({"stop_reason": "error", "refused": 1}, 1),
        ({"stop_reason": "cancelled", "interrupted": True}, 130),
        ({"stop_reason": "cancelled"}, 7),
        ({"stop_reason": "cancelled", "interrupted": True, "timed_out": True}, 130),
    ],
)
def test_exit_code_for_run(changes: dict[str, object], code: int) -> None:
    """Ctrl-C wins over a timeout, which wins over the stop reason; refusals give 5."""
    summary = RunSummary(session_id="s", **changes)  # type: ignore[arg-type]
    assert summary.exit_code == code


def test_rpc_errors_caused_by_the_caller_are_usage_errors() -> None:
    """Unknown session, invalid params, config errors → 2; anything else → 1."""
    assert exit_code_for_rpc_error(-32003) == outcome.USAGE_ERROR
    assert exit_code_for_rpc_error(-32602) == outcome.USAGE_ERROR
    assert exit_code_for_rpc_error(-32005) == outcome.USAGE_ERROR
    assert exit_code_for_rpc_error(-32603) == outcome.AGENT_ERROR
    assert exit_code_for_rpc_error(-32002) == outcome.AGENT_ERROR


def test_result_line_contract() -> None:
    """The --json result line carries the documented fields, optional ones only when set."""
    summary = RunSummary(
        session_id="s1", stop_reason="end_turn", turns=1, usage={"inputTokens": 3}, cost=0.5
    )
    assert summary.result_line() == {
        "type": "result",
        "stopReason": "end_turn",
        "sessionId": "s1",
        "turns": 1,
        "usage": {"inputTokens": 3},
        "cost": 0.5,
        "durationMs": 0,
        "exitCode": 0,
    }
    summary.timed_out, summary.error = True, "late"
    line = summary.result_line()
    assert (line["timedOut"], line["error"], line["exitCode"]) == (True, "late", 4)
    failed = error_result_line("no daemon", 1)
    assert failed["type"] == "result"
    assert failed["sessionId"] is None
    assert failed["exitCode"] == 1
