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
