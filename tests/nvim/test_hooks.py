"""A hook's block in the Neovim transcript: one ``⊘`` line. Real nvim, real daemon, a real
hook script in the user's config."""

from __future__ import annotations

import pytest

from tests.hooks.conftest import hook, script
from tests.nvim.harness import EditorFactory, Home

pytestmark = pytest.mark.e2e


def test_a_blocked_call_is_a_transcript_line(home: Home, editor_factory: EditorFactory) -> None:
    policy = script(
        home.root,
        "no-writes.sh",
        'echo "writes need a review first" >&2\nexit 2\n',
    )
    home.user_config(hook("pre_tool", str(policy), matcher="write"))
    editor = editor_factory()
    editor.nvim.command("Agent hello world")
    lines = editor.wait_run_end().splitlines()
    blocks = [line for line in lines if line.startswith("⊘")]
    assert blocks == [f"⊘ pre_tool hook blocked write: writes need a review first ({policy})"]
    assert not (home.project / "hello.py").exists()


def test_a_reloaded_session_shows_the_block_where_it_happened(
    home: Home, editor_factory: EditorFactory
) -> None:
    """Loading the session again replays the block after the blocked call's line (the
    daemon's ``session/load`` replay places it), not at the end or not at all."""
    policy = script(home.root, "no-writes.sh", 'echo "writes need a review first" >&2\nexit 2\n')
    home.user_config(hook("pre_tool", str(policy), matcher="write"))
    editor = editor_factory()
    editor.nvim.command("Agent hello world")
    live = editor.wait_run_end()
    session_id = editor.lua("return require('agentd').session_id()")
    editor.nvim.command("AgentNew")
    editor.lua(f"require('agentd.sessions').load('{session_id}')")
    block = f"⊘ pre_tool hook blocked write: writes need a review first ({policy})"
    editor.wait_for(lambda: "Done! hello.py" in editor.transcript(), what="the replayed history")
    lines = editor.transcript().splitlines()
    assert lines.count(block) == 1
    write = next(i for i, line in enumerate(lines) if "write" in line and "hello.py" in line)
    assert write < lines.index(block)
    assert block in live
