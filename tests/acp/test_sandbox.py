"""``agentd acp --sandbox workspace``: ``--permission-mode auto`` works (nothing asked, the
edit lands); without the sandbox ``session/new`` and ``session/set_mode`` are refused with a
message naming the flag and the user's config file by its real path. The official ACP SDK
is the editor."""

from __future__ import annotations

import pytest

import acp
from tests.acp.conftest import Box, Editor, spawn

pytestmark = pytest.mark.e2e


async def test_auto_with_the_sandbox_runs_unasked(box: Box) -> None:
    box.user_config("", auto=False)  # no opt-in to auto without a sandbox
    editor = Editor(permission="reject_once")
    async with spawn(box, editor, "--permission-mode", "auto", "--sandbox", "workspace") as (
        conn,
        _,
    ):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("write the report")]
        )
    assert session.modes.current_mode_id == "auto"
    assert reply.stop_reason == "end_turn"
    assert editor.permission_requests == []
    assert (box.project / "report.md").exists()


async def test_auto_without_the_sandbox_names_the_flag_and_the_config(box: Box) -> None:
    config = box.user_config("", auto=False)
    async with spawn(box, Editor(), "--permission-mode", "auto") as (conn, _):
        with pytest.raises(acp.RequestError) as refused:
            await conn.new_session(cwd=str(box.project))
    message = str(refused.value) + str(refused.value.data or "")
    assert "--sandbox workspace" in message
    assert f"under `[permissions]` in {config}" in message


async def test_switching_to_auto_without_the_sandbox_says_how(box: Box) -> None:
    config = box.user_config("", auto=False)
    async with spawn(box, Editor()) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        with pytest.raises(acp.RequestError) as refused:
            await conn.set_session_mode(session_id=session.session_id, mode_id="auto")
    message = str(refused.value) + str(refused.value.data or "")
    assert "--sandbox workspace" in message
    assert str(config) in message
