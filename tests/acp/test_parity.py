"""What the ACP agents of other coding agents offer, through ``agentd acp`` and the official
ACP Python SDK as the editor: ``session/fork`` and ``session/delete``, the built-in
``/compact`` command in ``available_commands_update``. (``usage_update`` and the mode and
model config options: tests/acp/test_models_usage.py and test_sdk_e2e.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from acp.meta import AGENT_METHODS
from acp.schema import DeleteSessionRequest, DeleteSessionResponse
from acp.utils import request_model

import acp
from tests.acp.conftest import Box, Editor, spawn
from tests.harness import scaled

pytestmark = pytest.mark.e2e


def session_file(box: Box, session_id: str) -> Path | None:
    return next(Path(box.env["XDG_DATA_HOME"]).rglob(f"*_{session_id}.jsonl"), None)


async def delete(conn: acp.ClientSideConnection, session_id: str) -> None:
    """``session/delete`` with the SDK's own request type (0.12 has no method for it)."""
    request = DeleteSessionRequest(session_id=session_id)
    await request_model(conn._conn, AGENT_METHODS["session_delete"], request, DeleteSessionResponse)


async def test_fork_and_delete(box: Box) -> None:
    editor = Editor()
    argv = box.argv()
    async with acp.spawn_agent_process(editor, argv[0], *argv[1:], env=box.env) as (conn, _):
        caps = (await conn.initialize(protocol_version=1)).agent_capabilities
        original = await conn.new_session(cwd=str(box.project))
        await conn.prompt(
            session_id=original.session_id, prompt=[acp.text_block("write the report")]
        )
        fork = await conn.fork_session(session_id=original.session_id, cwd=str(box.project))
        reply = await conn.prompt(session_id=fork.session_id, prompt=[acp.text_block("hello")])
        listed = await conn.list_sessions(cwd=str(box.project))
        await delete(conn, fork.session_id)
        after = await conn.list_sessions(cwd=str(box.project))
        with pytest.raises(acp.RequestError) as gone:
            await conn.prompt(session_id=fork.session_id, prompt=[acp.text_block("hello")])
        with pytest.raises(acp.RequestError) as elsewhere:
            await conn.fork_session(session_id=original.session_id, cwd=str(box.root))
    assert caps.session_capabilities.fork is not None
    assert caps.session_capabilities.delete is not None
    assert fork.session_id != original.session_id
    assert fork.modes.current_mode_id == original.modes.current_mode_id
    assert {o.id for o in fork.config_options} == {"mode", "model"}
    assert reply.stop_reason == "end_turn"
    forked = session_file(box, fork.session_id)
    assert forked is None  # deleted
    ids = [s.session_id for s in listed.sessions]
    assert original.session_id in ids
    assert fork.session_id in ids
    assert [s.session_id for s in after.sessions] == [original.session_id]
    assert session_file(box, original.session_id) is not None  # the original stays
    assert gone.value.code == -32002  # resource not found: the editor closed it
    assert "folder" in str(elsewhere.value)


async def test_a_fork_carries_the_history(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        original = await conn.new_session(cwd=str(box.project))
        await conn.prompt(
            session_id=original.session_id, prompt=[acp.text_block("write the report")]
        )
        fork = await conn.fork_session(session_id=original.session_id, cwd=str(box.project))
    replayed = Editor()
    async with spawn(box, replayed) as (conn, _):
        await conn.load_session(cwd=str(box.project), session_id=fork.session_id)
    assert replayed.text("user_message_chunk") == "write the report"
    assert [c.title for c in replayed.of("tool_call")] == ["Write report.md"]


async def test_compact_is_a_built_in_command(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        await editor.wait_for(lambda: bool(editor.of("available_commands_update")), scaled(20))
        await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hello")])
        before = len(editor.of("agent_message_chunk"))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("/compact keep the names")]
        )
    [first] = editor.of("available_commands_update")[:1]
    compact = first.available_commands[0]
    assert (compact.name, compact.input.root.hint) == ("compact", "[instructions]")
    assert reply.stop_reason == "end_turn"
    said = "".join(u.content.text for u in editor.of("agent_message_chunk")[before:])
    assert said == "Nothing to compact yet: the conversation is short."  # one short turn
    stored = session_file(box, session.session_id)
    assert stored is not None
    assert "/compact" not in stored.read_text()  # run by the front-end, not a prompt


async def test_fork_and_delete_in_the_shared_daemon(box: Box) -> None:
    """With ``--shared`` the fork and the delete go through the socket daemon."""
    editor = Editor()
    async with spawn(box, editor, "--shared") as (conn, _):
        original = await conn.new_session(cwd=str(box.project))
        await conn.prompt(session_id=original.session_id, prompt=[acp.text_block("hello")])
        fork = await conn.fork_session(session_id=original.session_id, cwd=str(box.project))
        reply = await conn.prompt(session_id=fork.session_id, prompt=[acp.text_block("hello")])
        assert session_file(box, fork.session_id) is not None
        await delete(conn, fork.session_id)
    assert reply.stop_reason == "end_turn"
    assert session_file(box, fork.session_id) is None
    assert session_file(box, original.session_id) is not None
