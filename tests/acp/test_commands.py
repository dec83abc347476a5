"""Custom commands through ``agentd acp``, driven by the official ACP Python SDK: the
``available_commands_update`` after ``session/new`` and after the files change, a ``/name``
prompt expanded by agentd, the typed command in a loaded session's history."""

from __future__ import annotations

from pathlib import Path

import pytest

import acp
from agentd.acp.builtins import BUILTINS
from tests.acp.conftest import Box, Editor, spawn
from tests.harness import scaled

pytestmark = pytest.mark.e2e

COMPACT = ("compact", BUILTINS[0].description, "[instructions]")
"""The built-in command every list starts with (agentd.acp.builtins)."""


def commands_dir(box: Box) -> Path:
    folder = box.config_dir / "agentd" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def offered(editor: Editor) -> list[list[tuple[str, str, str | None]]]:
    """Every command list the editor was sent, as (name, description, input hint)."""
    return [
        [
            (c.name, c.description, c.input.root.hint if c.input else None)
            for c in u.available_commands
        ]
        for u in editor.of("available_commands_update")
    ]


async def test_commands_are_offered_and_follow_the_files(box: Box) -> None:
    folder = commands_dir(box)
    (folder / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 carefully."
    )
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        await editor.wait_for(lambda: len(offered(editor)) == 1, scaled(20))
        assert offered(editor) == [[COMPACT, ("review", "Review a file", "FILE")]]

        (folder / "standup.md").write_text("Summarise yesterday's commits.")
        await editor.wait_for(lambda: len(offered(editor)) == 2, scaled(20))  # the poll
        assert offered(editor)[-1] == [
            COMPACT,
            ("review", "Review a file", "FILE"),
            ("standup", "Summarise yesterday's commits.", None),
        ]

        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("/review notes.txt")]
        )
        assert reply.stop_reason == "end_turn"
    assert len(offered(editor)) == 2  # unchanged lists are not sent again
    stored = next(Path(box.env["XDG_DATA_HOME"]).rglob(f"*_{session.session_id}.jsonl"))
    text = stored.read_text()
    assert '"command":"/review notes.txt"' in text
    assert "Review notes.txt carefully." in text

    replayed = Editor()
    async with spawn(box, replayed) as (conn, _):
        await conn.load_session(cwd=str(box.project), session_id=session.session_id)
        await replayed.wait_for(lambda: len(offered(replayed)) == 1, scaled(20))
    assert replayed.text("user_message_chunk") == "/review notes.txt"


async def test_an_unknown_command_is_an_error_the_editor_sees(box: Box) -> None:
    (commands_dir(box) / "review.md").write_text("Review $1.")
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        with pytest.raises(acp.RequestError) as caught:
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("/reveiw x")])
    assert "unknown command /reveiw" in str(caught.value)
    assert "/review" in str(caught.value)


async def test_without_custom_commands_the_built_ins_are_offered_once(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hello")])
        await editor.wait_for(lambda: len(offered(editor)) == 1, scaled(20))
    assert offered(editor) == [[COMPACT]]


async def test_a_custom_command_named_like_a_built_in_is_hidden(box: Box) -> None:
    (commands_dir(box) / "compact.md").write_text("---\ndescription: Mine\n---\nShorten $1.")
    (commands_dir(box) / "review.md").write_text("Review $1.")
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        await conn.new_session(cwd=str(box.project))
        await editor.wait_for(lambda: len(offered(editor)) == 1, scaled(20))
    assert offered(editor) == [[COMPACT, ("review", "Review $1.", None)]]


async def test_shared_mode_offers_the_shared_daemons_commands(box: Box) -> None:
    """With ``--shared`` the list comes from the socket daemon (``RemoteSessions``)."""
    (commands_dir(box) / "review.md").write_text("---\ndescription: Review\n---\nReview $1.")
    editor = Editor()
    async with spawn(box, editor, "--shared") as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        await editor.wait_for(lambda: len(offered(editor)) == 1, scaled(20))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("/review a.py")]
        )
    assert reply.stop_reason == "end_turn"
    assert offered(editor) == [[COMPACT, ("review", "Review", None)]]
