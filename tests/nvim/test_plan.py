"""The agent's plan in the Neovim chat buffer: pinned below the header, replaced in place by
each update, and back after loading the session (replay). Real nvim, real daemon."""

from __future__ import annotations

import pytest

from tests.nvim.harness import Editor

pytestmark = pytest.mark.e2e

DONE = [
    "◆ plan  3/3 done",
    "  ✔ Read the parser",
    "  ✔ Fix the off-by-one",
    "  ✔ Run the tests",
    "",
]


def test_plan_is_pinned_and_replaced_in_place(editor: Editor) -> None:
    editor.nvim.command("Agent work through a plan")
    lines = editor.wait_run_end().splitlines()
    assert lines[1:6] == DONE
    assert sum(line.startswith("◆ plan") for line in lines) == 1
    assert "All three steps are done." in lines
    assert any(line.startswith("▸ ✓ todo") for line in lines)


def test_plan_comes_back_when_the_session_is_loaded(editor: Editor) -> None:
    editor.nvim.command("Agent work through a plan")
    editor.wait_run_end()
    session_id = editor.lua("return require('agentd.client').session.sessionId")
    editor.lua("require('agentd.transcript').clear()")
    assert "◆ plan" not in editor.transcript()
    editor.lua("require('agentd.sessions').load(...)", session_id)
    editor.wait_for(lambda: "All three steps are done." in editor.transcript(), what="replay")
    editor.wait_for(lambda: editor.transcript().splitlines()[1:6] == DONE, what="pinned plan")


def test_an_empty_plan_removes_the_pinned_lines(editor: Editor) -> None:
    """Fed directly: a shorter plan, then an empty one, leave the rest of the buffer intact."""
    lines = editor.lua(
        """
        local t = require('agentd.transcript')
        t.reset({sessionId = 's1', provider = 'p', model = 'm'})
        local step = function(c, s) return {content = c, status = s, priority = 'medium'} end
        local two = {step('a', 'in_progress'), step('b', 'pending')}
        t.push({type = 'plan_update', entries = two}, 1)
        t.push({type = 'message_start', role = 'assistant', messageId = 'm1'}, 2)
        t.push({type = 'message_update', delta = {type = 'text_delta', text = 'hello'}}, 3)
        t.flush()
        local before = vim.api.nvim_buf_get_lines(t.buffer(), 0, -1, false)
        t.push({type = 'plan_update', entries = {step('a', 'completed')}}, 4)
        t.flush()
        local shorter = vim.api.nvim_buf_get_lines(t.buffer(), 0, -1, false)
        t.push({type = 'plan_update', entries = {}}, 5)
        t.push({type = 'message_update', delta = {type = 'text_delta', text = ' there'}}, 6)
        t.flush()
        return {before, shorter, vim.api.nvim_buf_get_lines(t.buffer(), 0, -1, false)}
        """
    )
    before, shorter, cleared = lines
    assert before[1:5] == ["◆ plan  0/2 done", "  ▸ a", "  ○ b", ""]
    assert before[-1] == "hello"
    assert shorter[1:4] == ["◆ plan  1/1 done", "  ✔ a", ""]
    assert shorter[4:] == before[5:]
    assert cleared[1:] == [*before[5:-1], "hello there"]
