"""ACP: a task call reaches the editor as a tool call whose content is the child's final
text, and a child's approval is asked in the editor's own session (official ACP SDK as the
editor, a real ``agentd acp``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import acp
from tests.acp.conftest import Box, Editor, spawn
from tests.harness import BUILTIN_SCENARIOS
from tests.subagents.scenarios import SUBAGENT_SCENARIOS

pytestmark = pytest.mark.e2e


@pytest.fixture
def box() -> Iterator[Box]:
    with Box() as made:
        scenarios = json.loads(BUILTIN_SCENARIOS.read_text())
        scenarios["scenarios"] = [*SUBAGENT_SCENARIOS, *scenarios["scenarios"]]
        path = made.root / "subagent-scenarios.json"
        path.write_text(json.dumps(scenarios))
        made.env["AGENTD_MOCK_SCENARIOS"] = str(path)
        yield made


async def test_a_task_is_a_tool_call_with_the_childs_text(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("delegate the answer")]
        )
    assert reply.stop_reason == "end_turn"
    (call,) = editor.of("tool_call")
    assert call.tool_call_id == "task_1"
    assert call.raw_input == {
        "description": "Find the answer",
        "prompt": "child alpha: find the answer",
    }
    final = next(u for u in editor.of("tool_call_update") if u.status == "completed")
    assert final.tool_call_id == "task_1"
    assert "The answer is 42." in final.content[0].content.text
    assert editor.text().endswith("The subagent says the answer is 42.")
    # the child's own stream is not mixed into the editor's session
    assert "The answer is 42." not in editor.text()


class RecordingEditor(Editor):
    """An editor that also notes the session of each permission request."""

    asked_in: list[str]

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        self.asked_in.append(session_id)
        return await super().request_permission(session_id, tool_call, options, **kwargs)


async def test_a_childs_approval_is_asked_in_the_editors_session(box: Box) -> None:
    editor = RecordingEditor(permission="allow_once")
    editor.asked_in = []
    async with spawn(box, editor, "--permission-mode", "ask") as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("delegate a write")]
        )
    assert reply.stop_reason == "end_turn"
    (tool_call, _options) = editor.permission_requests[0]
    assert tool_call.title == "Write child.txt"
    assert editor.asked_in == [session.session_id]
    assert (box.project / "child.txt").read_text() == "hi\n"
