"""The agent's plan over ACP: ``todo`` calls become ``plan`` updates, live and on load."""

from __future__ import annotations

import pytest

import acp
from tests.acp.conftest import Box, Editor, spawn
from tests.scenarios import PLAN_DONE, PLAN_FIRST, plan_steps

pytestmark = pytest.mark.e2e


def _steps(update: object) -> list[tuple[str, str, str]]:
    return [(e.content, e.status, e.priority) for e in update.entries]  # type: ignore[attr-defined]


def _expected(plan: list[dict[str, str]]) -> list[tuple[str, str, str]]:
    return [(s["content"], s["status"], s.get("priority", "medium")) for s in plan]


async def test_plan_updates_live_and_after_load(box: Box) -> None:
    """Each todo call sends a ``plan`` update (the SDK's typed AgentPlanUpdate), in order
    with the tool calls; loading the session later ends its replay with the current plan."""
    box.use_scenarios([plan_steps()])
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("work through a plan")]
        )
    assert reply.stop_reason == "end_turn"
    plans = editor.of("plan")
    assert [_steps(p) for p in plans] == [_expected(PLAN_FIRST), _expected(PLAN_DONE)]
    assert type(plans[0]).__name__ == "AgentPlanUpdate"
    kinds = [k for k in editor.kinds() if k in ("plan", "tool_call")]
    assert kinds == ["tool_call", "plan", "tool_call", "plan"]

    later = Editor()
    async with spawn(box, later) as (conn, _):
        await conn.load_session(cwd=str(box.project), session_id=session.session_id)
        assert later.kinds()[-1] == "plan"
        assert _steps(later.of("plan")[-1]) == _expected(PLAN_DONE)
