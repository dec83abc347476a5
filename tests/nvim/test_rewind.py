""":AgentRewind in real Neovim against a real daemon: the confirmation (through the built-in
vim.ui.select, answered by typing) lists the files, the files go back, the transcript is
loaded again without the discarded turn; a bad count is a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import Home
from tests.nvim.harness import EditorFactory
from tests.rewind.scenarios import KEEP_BEFORE, SCENARIOS

pytestmark = pytest.mark.e2e  # real nvim and a real daemon

RECORD_PROMPTS = """
_G.agentd_test_prompts = {}
local builtin = vim.ui.select
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.agentd_test_prompts, opts.prompt)
  builtin(items, opts, on_choice)
end
"""


def test_agent_rewind_asks_then_restores(home: Home, editor_factory: EditorFactory) -> None:
    project: Path = home.project
    home.use_scenarios(SCENARIOS)
    (project / "keep.txt").write_text(KEEP_BEFORE)
    editor = editor_factory()
    editor.lua(RECORD_PROMPTS)
    editor.nvim.command("Agent rewind turn one")
    editor.wait_run_end(1)
    editor.nvim.command("Agent rewind turn two")
    editor.wait_run_end(2)
    assert "rewind-two done." in editor.transcript()
    editor.nvim.command(f"edit {project / 'a.txt'}")
    assert editor.nvim.current.buffer[:] == ["two"]

    editor.nvim.command("AgentRewind")
    editor.answer("1\r")
    editor.wait_for(
        lambda: (project / "a.txt").read_text() == "one\n", what="a.txt restored by the rewind"
    )
    (question,) = editor.lua("return _G.agentd_test_prompts")
    assert question.startswith("Rewind to before “rewind turn two”?")
    assert "Restore: a.txt, keep.txt" in question
    assert "Remove: sub/deep.txt" in question
    editor.wait_for(
        lambda: (
            "rewind-two done." not in editor.transcript()
            and "rewind-one done." in editor.transcript()
        ),
        what="the transcript without the second turn",
    )
    editor.wait_for(
        lambda: any("rewound: 2 restored, 1 removed" in note for note in editor.notes()),
        what="the summary",
    )
    assert (project / "keep.txt").read_text() == "kept line\n"
    assert not (project / "sub" / "deep.txt").exists()
    editor.wait_for(lambda: editor.nvim.current.buffer[:] == ["one"], what="the buffer reloaded")
    editor.finish()


def test_agent_rewind_cancelled_or_bad_count(home: Home, editor_factory: EditorFactory) -> None:
    project: Path = home.project
    home.use_scenarios(SCENARIOS)
    (project / "keep.txt").write_text(KEEP_BEFORE)
    editor = editor_factory()
    editor.nvim.command("AgentRewind")
    editor.wait_for(lambda: any("no session to rewind" in n for n in editor.notes()))
    editor.nvim.command("Agent rewind turn one")
    editor.wait_run_end(1)
    editor.nvim.command("AgentRewind x")
    editor.wait_for(lambda: any("takes a number of prompts" in n for n in editor.notes()))
    editor.nvim.command("AgentRewind 3")
    editor.wait_for(
        lambda: any("cannot rewind: cannot rewind 3 turns" in n for n in editor.notes())
    )
    editor.nvim.command("AgentRewind")
    editor.answer("2\r")  # Cancel
    editor.wait_for(lambda: not editor.in_prompt(), what="the prompt closed")
    assert (project / "a.txt").read_text() == "one\n"
    assert "rewind-one done." in editor.transcript()
    editor.finish()


def test_agent_rewind_with_a_conflict_offers_rewind_anyway(
    home: Home, editor_factory: EditorFactory
) -> None:
    """a.txt changed by hand: the question lists the conflict and offers "Rewind anyway";
    Cancel moves nothing; "Rewind anyway" rewinds the same prompt, a.txt overwritten."""
    project: Path = home.project
    home.use_scenarios(SCENARIOS)
    (project / "keep.txt").write_text(KEEP_BEFORE)
    editor = editor_factory()
    editor.lua(RECORD_PROMPTS)
    editor.nvim.command("Agent rewind turn one")
    editor.wait_run_end(1)
    editor.nvim.command("Agent rewind turn two")
    editor.wait_run_end(2)
    (project / "a.txt").write_text("mine now\n")

    editor.nvim.command("AgentRewind")
    editor.answer("2\r")  # Cancel
    editor.wait_for(lambda: not editor.in_prompt(), what="the prompt closed")
    (question,) = editor.lua("return _G.agentd_test_prompts")
    assert "Conflicts: a.txt (changed since agentd left it; a forced rewind overwrites it)" in (
        question
    )
    assert "“Rewind anyway” overwrites the changed files" in question
    assert (project / "a.txt").read_text() == "mine now\n"
    assert (project / "sub" / "deep.txt").exists()
    assert "rewind-two done." in editor.transcript()

    editor.nvim.command("AgentRewind")
    editor.answer("1\r")  # Rewind anyway
    editor.wait_for(
        lambda: (project / "a.txt").read_text() == "one\n", what="a.txt overwritten by the rewind"
    )
    editor.wait_for(
        lambda: "rewind-two done." not in editor.transcript(), what="the second turn gone"
    )
    assert "rewind-one done." in editor.transcript()
    assert (project / "keep.txt").read_text() == "kept line\n"
    assert not (project / "sub" / "deep.txt").exists()
    editor.finish()
