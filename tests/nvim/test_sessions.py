"""Cancelling a run and the session picker (load, fork, rename, delete) through the built-in
vim.ui.select and vim.ui.input, answered by typing as a user would."""

from __future__ import annotations

from typing import Any

import pytest

from tests.nvim.harness import Editor

pytestmark = pytest.mark.e2e  # real nvim and a real daemon

LIST = """
local done, result
require('agentd.client').call('session/list', {cwd = vim.fn.getcwd()}, function(err, r)
  done, result = true, r
end)
vim.wait(5000, function() return done end, 10)
return result.sessions
"""


def _sessions(editor: Editor) -> list[dict[str, Any]]:
    return list(editor.lua(LIST))


# The built-in prompts, each opened 150 ms late: keys for the next prompt are only typed once
# the previous one has visibly closed (typed earlier, Normal mode would eat them).
SPACED_PROMPTS = """
for _, name in ipairs({"select", "input"}) do
  local builtin = vim.ui[name]
  vim.ui[name] = function(...)
    local args = {...}
    vim.defer_fn(function() builtin(unpack(args)) end, 150)
  end
end
"""


def _next_answer(editor: Editor, keys: str) -> None:
    editor.wait_for(lambda: not editor.in_prompt(), what="the previous prompt to close")
    editor.answer(keys)


def _pick(editor: Editor, session_id: str, action: int) -> None:
    """:AgentSessions, choose ``session_id``, then action ``action`` (1 load ... 4 delete)."""
    index = [s["sessionId"] for s in _sessions(editor)].index(session_id) + 1
    editor.nvim.command("AgentSessions")
    _next_answer(editor, f"{index}\r")
    _next_answer(editor, f"{action}\r")


def test_cancel_stops_a_running_tool(editor: Editor) -> None:
    editor.nvim.command("Agent sleep in bash")
    editor.wait_for(lambda: "▸ ⋯ bash  sleep 30" in editor.transcript(), what="bash running")
    editor.nvim.command("AgentCancel")
    text = editor.wait_run_end(timeout=10)
    assert text.splitlines()[-1].startswith("── cancelled")
    editor.nvim.command("AgentCancel")
    editor.wait_for(lambda: "2 agentd: nothing is running" in editor.notes(), what="notice")


def test_session_picker_rename_fork_load_delete(editor: Editor) -> None:
    editor.lua(SPACED_PROMPTS)
    editor.nvim.command("Agent how are you")
    editor.wait_run_end()
    first = str(editor.lua("return require('agentd').session_id()"))

    _pick(editor, first, 3)
    _next_answer(editor, "<C-u>Renamed chat\r")
    editor.wait_for(lambda: "2 agentd: renamed to Renamed chat" in editor.notes(), what="rename")
    assert editor.transcript().startswith("agentd · Renamed chat · mock/")

    _pick(editor, first, 2)
    editor.wait_for(lambda: any("forked into" in n for n in editor.notes()), what="fork")
    fork = str(editor.lua("return require('agentd').session_id()"))
    assert fork != first
    editor.wait_for(lambda: "▍You\nhow are you" in editor.transcript(), what="replayed history")

    editor.nvim.command("AgentNew")
    assert editor.lua("return require('agentd').session_id()") is None
    _pick(editor, first, 1)
    editor.wait_for(
        lambda: (
            editor.transcript().startswith("agentd · Renamed chat")
            and "▍You\nhow are you" in editor.transcript()
        ),
        what="load with its history",
    )
    assert editor.lua("return require('agentd').session_id()") == first

    _pick(editor, fork, 4)
    _next_answer(editor, "1\r")
    editor.wait_for(lambda: f"2 agentd: deleted {fork}" in editor.notes(), what="delete")
    assert [s["sessionId"] for s in _sessions(editor)] == [first]


def test_model_picker_switches_the_session_model(editor: Editor) -> None:
    editor.nvim.command("Agent how are you")
    editor.wait_run_end()
    editor.nvim.command("AgentModel")
    editor.answer("1\r")
    editor.wait_for(lambda: any(n.startswith("2 agentd: model: mock/") for n in editor.notes()))


def test_a_wait_that_times_out_in_a_prompt_fails_instead_of_hanging(editor: Editor) -> None:
    """A test that fails while Neovim waits in a prompt must fail, not wait for ever: the
    failure's Lua diagnostics would wait for the prompt's keys, so the prompt is left first."""
    # vim.ui.select's prompt: while it waits, Neovim answers no Lua call
    editor.lua("vim.defer_fn(function() pcall(vim.fn.inputlist, {'pick:', '1. one'}) end, 10)")
    editor.wait_blocking_prompt()
    with pytest.raises(AssertionError, match="mode"):
        editor.wait_for(lambda: False, timeout=0.2, what="something that never happens")
    assert not editor.in_prompt()
    assert editor.lua("return 1 + 1") == 2
