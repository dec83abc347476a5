"""Hooks over ACP (the official SDK as the editor): a block is a thought saying which hook
blocked what; a blocked prompt answers with stop reason ``refusal``."""

from __future__ import annotations

import pytest

import acp
from tests.acp.conftest import Box, Editor, spawn
from tests.hooks.conftest import hook, script

pytestmark = pytest.mark.e2e


async def test_a_blocked_call_and_a_blocked_prompt(box: Box) -> None:
    no_writes = script(box.root, "no-writes.sh", 'echo "writes need a review first" >&2\nexit 2\n')
    no_prod = script(
        box.root, "no-prod.sh", 'grep -q prod && { echo "not in prod" >&2; exit 2; }\nexit 0\n'
    )
    box.user_config(
        hook("pre_tool", str(no_writes), matcher="write") + hook("user_prompt", str(no_prod))
    )
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("write the report")]
        )
        assert reply.stop_reason == "end_turn"
        thought = editor.text("agent_thought_chunk")
        assert f"⊘ pre_tool hook blocked write: writes need a review first ({no_writes})" in thought
        failed = [u for u in editor.of("tool_call_update") if u.status == "failed"]
        assert failed
        assert not (box.project / "report.md").exists()

        blocked = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("deploy to prod")]
        )
        assert blocked.stop_reason == "refusal"
        assert "⊘ user_prompt hook blocked the prompt: not in prod" in editor.text(
            "agent_thought_chunk"
        )
