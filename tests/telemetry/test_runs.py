"""More of a run's telemetry, from a real ``agentd --stdio`` in ``ask`` mode to the test's
OTLP/HTTP receiver: a subagent's run nested under the parent's ``task`` call, an approval
waited for (a span event and the ``agentd.approval.wait`` metric), and a failed provider
call (``error.type`` on the run and the model call, the ``agentd.errors`` metric)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentd.protocol.methods import RequestPermissionParams
from tests.harness import Home, new_session, scaled, stdio_client, wait_until
from tests.scenarios import tool_call
from tests.subagents.scenarios import SUBAGENT_SCENARIOS
from tests.telemetry.receiver import Receiver, attributes
from tests.telemetry.test_export import FAST_EXPORT

WAIT = 0.3
WRITE = {
    "name": "telemetry-write",
    "trigger": "telemetry write",
    "steps": [
        {"response": {"tool_calls": [tool_call("write", {"path": "n.txt", "content": "x\n"})]}},
        {"response": {"content": "Written."}},
    ],
}


async def _allow_after_a_while(params: RequestPermissionParams) -> Any:
    await asyncio.sleep(WAIT)
    return "allow_once"


@pytest.fixture
def receiver() -> Any:
    found = Receiver()
    yield found
    found.close()


def _home(receiver: Receiver) -> Home:
    home = Home()
    home.use_scenarios([WRITE, *SUBAGENT_SCENARIOS])
    home.user_config(
        'permission_mode = "ask"\n'
        f'[telemetry]\notlp_endpoint = "{receiver.endpoint}"\nmetrics_interval = 0.3\n'
    )
    home.env.update(FAST_EXPORT)
    return home


def _run_spans(receiver: Receiver, count: int) -> list[Any]:
    """The ``invoke_agent`` spans once ``count`` have arrived, oldest first."""
    runs = wait_until(
        lambda: (
            len(found := [s for s in receiver.spans() if s.name.startswith("invoke_agent")])
            >= count
            and found
        ),
        scaled(20),
        f"{count} run spans",
    )
    return sorted(runs, key=lambda span: span.start_time_unix_nano)


async def test_subagent_approval_and_provider_error(receiver: Receiver) -> None:
    home = _home(receiver)
    try:
        async with stdio_client(home, permission_handler=_allow_after_a_while) as client:
            tools = ["read", "write", "task"]
            parent = await new_session(client, home, tools=tools)
            prompt = {"sessionId": parent, "text": "delegate the answer"}
            assert (await client.call("session/prompt", prompt))["stopReason"] == "end_turn"
            prompt = {"sessionId": parent, "text": "telemetry write"}
            assert (await client.call("session/prompt", prompt))["stopReason"] == "end_turn"
            failing = await new_session(client, home)
            prompt = {"sessionId": failing, "text": "server error"}
            assert (await client.call("session/prompt", prompt))["stopReason"] == "error"
            runs = await asyncio.to_thread(_run_spans, receiver, 4)
        points = await asyncio.to_thread(
            wait_until,
            lambda: "agentd.errors" in (found := receiver.metric_points()) and found,
            scaled(20),
            "the metrics at shutdown",
        )
    finally:
        home.cleanup()
    spans = receiver.spans()
    _check_subagent(spans, runs, parent)
    _check_approval(spans, points)
    _check_error(spans, runs[-1], points)


def _check_subagent(spans: list[Any], runs: list[Any], parent: str) -> None:
    parent_run = next(
        r for r in runs if attributes(r.attributes)["gen_ai.conversation.id"] == parent
    )
    child_run = next(r for r in runs if "agentd.parent_session_id" in attributes(r.attributes))
    assert attributes(child_run.attributes)["agentd.parent_session_id"] == parent
    task = next(s for s in spans if s.name == "execute_tool task")
    assert child_run.parent_span_id == task.span_id
    assert child_run.trace_id == task.trace_id == parent_run.trace_id
    assert not parent_run.parent_span_id  # no traceparent given: a trace of its own


def _check_approval(spans: list[Any], points: dict[str, list[Any]]) -> None:
    events = [e for s in spans for e in s.events if e.name == "approval"]
    write = [attributes(e.attributes) for e in events]
    write = [e for e in write if e["gen_ai.tool.name"] == "write"]
    assert len(write) == 1
    assert write[0]["agentd.approval.outcome"] == "allow_once"
    assert write[0]["agentd.approval.wait_s"] >= WAIT * 0.9
    waits = [
        p
        for p in points["agentd.approval.wait"]
        if attributes(p.attributes)["gen_ai.tool.name"] == "write"
    ]
    assert waits
    assert waits[-1].count == 1
    assert waits[-1].sum >= WAIT * 0.9


def _check_error(spans: list[Any], failed_run: Any, points: dict[str, list[Any]]) -> None:
    run = attributes(failed_run.attributes)
    assert run["agentd.stop_reason"] == "error"
    assert run["error.type"] == "provider_error"
    assert failed_run.status.code == 2  # STATUS_CODE_ERROR
    calls = [s for s in spans if s.name.startswith("chat ") and s.trace_id == failed_run.trace_id]
    assert [attributes(c.attributes)["error.type"] for c in calls] == ["provider_error"]
    errors = points["agentd.errors"]
    assert {attributes(p.attributes)["error.type"] for p in errors} == {"provider_error"}
    ended = {attributes(p.attributes)["agentd.stop_reason"] for p in points["agentd.runs"]}
    assert ended == {"end_turn", "error"}
