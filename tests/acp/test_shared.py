"""``agentd acp --shared``: ACP sessions are the shared daemon's sessions, seen and continued
from the shell with ``agentctl``, and live events reach the editor from shell runs too."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

import acp
from tests.acp.conftest import Box, Editor, spawn
from tests.harness import scaled

pytestmark = pytest.mark.e2e


def agentctl(box: Box, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentctl", *args],
        env=box.env,
        cwd=box.project,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )


async def test_acp_sessions_are_shell_sessions(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor, "--shared") as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        sid = session.session_id
        reply = await conn.prompt(session_id=sid, prompt=[acp.text_block("edit the notes")])
        assert reply.stop_reason == "end_turn"
        listed = await asyncio.to_thread(agentctl, box, "sessions", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert sid in listed.stdout
        before = len(editor.updates)
        sent = await asyncio.to_thread(agentctl, box, "send", "--session", sid, "run the tests")
        assert sent.returncode == 0, sent.stderr
        assert "All 3 tests pass." in sent.stdout
        await editor.wait_for(lambda: "All 3 tests pass." in editor.text())
        assert any(u.session_update == "tool_call" for _, u in editor.updates[before:])
    shown = agentctl(box, "sessions", "show", sid, "--json")
    assert shown.returncode == 0, shown.stderr
    texts = json.dumps(json.loads(shown.stdout) if shown.stdout.startswith("[") else shown.stdout)
    assert "edit the notes" in texts
    assert "run the tests" in texts


async def test_shared_mode_asks_and_edits_through_the_editor(box: Box) -> None:
    """With ``--shared`` the daemon's permission and file requests reach the editor (through
    the session API's remote client) as they do in-process: the edit is approved in the
    editor and lands in its buffer, not on disk."""
    draft = box.project / "draft.txt"
    draft.write_text("saved text\n")
    editor = Editor(fs=True, buffers={str(draft): "an unsaved typo\n"})
    async with spawn(box, editor, "--shared") as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        sid = session.session_id
        await conn.set_session_mode(session_id=sid, mode_id="ask")
        reply = await conn.prompt(session_id=sid, prompt=[acp.text_block("fix the draft")])
    assert reply.stop_reason == "end_turn"
    assert [call.title for call, _ in editor.permission_requests] == ["Edit draft.txt"]
    assert editor.buffers[str(draft)] == "an unsaved fix\n"
    assert str(draft) in editor.reads
    assert draft.read_text() == "saved text\n", "the editor, not the daemon, owns the file"


async def test_shared_mode_a_cancelled_approval_cancels_the_turn(box: Box) -> None:
    """The ``cancelled`` outcome cancels the turn in ``--shared`` mode too (through the shared
    daemon's ``session/cancel``): one request, nothing written, the turn ends ``cancelled``;
    and the editor's approval shows the whole file it would change."""
    editor = Editor(permission="cancelled")
    async with spawn(box, editor, "--shared") as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        sid = session.session_id
        await conn.set_session_mode(session_id=sid, mode_id="ask")
        reply = await conn.prompt(session_id=sid, prompt=[acp.text_block("write two reports")])
    assert reply.stop_reason == "cancelled"
    assert [call.title for call, _ in editor.permission_requests] == ["Write one.md"]
    (diff,) = editor.permission_requests[0][0].content
    assert (diff.type, diff.old_text, diff.new_text) == ("diff", None, "# One\n")
    assert not (box.project / "one.md").exists()
    assert not (box.project / "two.md").exists()


async def test_a_mode_or_model_change_from_the_shell_reaches_the_editor(box: Box) -> None:
    """The editor's mode and model follow the session's ``settings_changed`` events, so a
    change made by another client shows in the editor (it keeps no copy of its own)."""
    from agentctl.client import connect

    editor = Editor()
    async with spawn(box, editor, "--shared") as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        sid = session.session_id
        client = await connect(box.socket, autostart=False)
        try:
            params = {"sessionId": sid, "mode": "read-only"}
            await client.call("session/setPermissionMode", params)
        finally:
            await client.close()

        def moved() -> bool:  # both updates, which arrive one after the other
            updates = [u for _, u in editor.updates]
            options = [u for u in updates if u.session_update == "config_option_update"]
            return any(
                u.session_update == "current_mode_update" and u.current_mode_id == "read-only"
                for u in updates
            ) and bool(options and options[-1].config_options[0].current_value == "read-only")

        await editor.wait_for(moved)
