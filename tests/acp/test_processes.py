"""Background processes over ACP (the official SDK as the client): each is a tool call of its
own, ``process-p1``, in progress from its start, its content following the output as it
arrives (after the prompt has answered), ended ``completed`` or ``failed`` with how it ended."""

from __future__ import annotations

from typing import Any

import pytest

import acp
from tests.acp.conftest import Box, Editor, spawn
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

COMMAND = "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.3; done; exit 2"


def _scenario() -> dict[str, Any]:
    return {
        "name": "ticker",
        "trigger": "tick in the background",
        "steps": [
            {
                "response": {
                    "tool_calls": [tool_call("bash", {"command": COMMAND, "background": True})]
                }
            },
            {"response": {"content": "Ticking."}},
        ],
    }


def _text(update: Any) -> str:
    return "".join(getattr(item.content, "text", "") for item in update.content or [])


async def test_a_background_process_is_a_tool_call_that_follows_its_output(box: Box) -> None:
    box.use_scenarios([_scenario()])
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("tick in the background")]
        )
        assert reply.stop_reason == "end_turn"

        def ended() -> bool:
            return any(
                u.tool_call_id == "process-p1" and u.status == "failed"
                for u in editor.of("tool_call_update")
            )

        await editor.wait_for(ended)
    (start,) = [u for u in editor.of("tool_call") if u.tool_call_id == "process-p1"]
    assert start.kind == "execute"
    assert start.status == "in_progress"
    assert start.title.startswith("p1 (background): for i in")
    updates = [u for u in editor.of("tool_call_update") if u.tool_call_id == "process-p1"]
    live = [u for u in updates if u.status is None]
    assert len(live) >= 2  # the content followed the output
    assert "tick 6" in _text(updates[-1])
    assert "[exited 2 after" in _text(updates[-1])
    # the bash call that started it ended at once, completed
    bash_end = [u for u in editor.of("tool_call_update") if u.tool_call_id != "process-p1"]
    assert bash_end[-1].status == "completed"
