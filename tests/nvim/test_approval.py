"""Approvals through vim.ui.select: answered in Neovim, or decided by another client (which
closes the prompt Neovim shows)."""

from __future__ import annotations

import pytest

from tests.harness import scaled
from tests.nvim.harness import Editor, EditorFactory, Home, OtherClient

pytestmark = pytest.mark.e2e  # real nvim and a real daemon

ASYNC_SELECT = """
-- A picker like dressing.nvim's: a floating window, vim.ui.select returns at once.
_G.picker_calls = {}
vim.ui.select = function(items, opts, on_choice)
  local buf = vim.api.nvim_create_buf(false, true)
  local lines = {}
  for i, item in ipairs(items) do lines[i] = opts.format_item and opts.format_item(item) or item end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local win = vim.api.nvim_open_win(buf, true, {relative = "editor", row = 1, col = 1,
    width = 40, height = #lines, style = "minimal"})
  table.insert(_G.picker_calls, {prompt = opts.prompt, win = win})
  _G.picker_choose = function(i) vim.api.nvim_win_close(win, true); on_choice(items[i], i) end
end
"""


def test_allow_once_from_the_builtin_select(editor_factory: EditorFactory) -> None:
    editor: Editor = editor_factory(permission_mode="ask")
    editor.nvim.command("Agent write a note")
    editor.answer("1\r")
    text = editor.wait_run_end()
    assert (editor.home.project / "note.txt").read_text() == "noted\n"
    assert "⚑ allow_once" in text
    assert "▸ ✓ write  note.txt" in text


def test_reject_keeps_the_file_untouched(editor_factory: EditorFactory) -> None:
    editor: Editor = editor_factory(permission_mode="ask")
    editor.nvim.command("Agent write a note")
    editor.answer("3\r")
    text = editor.wait_run_end()
    assert not (editor.home.project / "note.txt").exists()
    assert "⚑ reject_once" in text
    assert "▸ ✗ write  note.txt" in text


def _shared_editor(editor_factory: EditorFactory, home: Home) -> tuple[Editor, str]:
    editor: Editor = editor_factory(
        connection="shared", socket=str(home.socket), permission_mode="ask"
    )
    editor.nvim.command("Agent how are you")
    editor.wait_run_end()
    return editor, str(editor.lua("return require('agentd').session_id()"))


def test_another_client_answering_closes_the_builtin_prompt(
    home: Home, socket_daemon: None, editor_factory: EditorFactory
) -> None:
    editor, session_id = _shared_editor(editor_factory, home)
    other = OtherClient(str(home.socket), session_id)
    try:
        editor.nvim.command("Agent write a note")
        editor.wait_blocking_prompt()
        assert other.asked.wait(scaled(10))
        other.go.set()
        text = editor.wait_run_end(2)
        assert not editor.in_prompt()
        assert (home.project / "note.txt").exists()
        assert "⚑ allow_once" in text
    finally:
        other.close()
        editor.finish()


def test_another_client_answering_closes_an_async_picker(
    home: Home, socket_daemon: None, editor_factory: EditorFactory
) -> None:
    editor, session_id = _shared_editor(editor_factory, home)
    editor.lua(ASYNC_SELECT)
    other = OtherClient(str(home.socket), session_id)
    try:
        editor.nvim.command("Agent write a note")
        calls = editor.wait_for(lambda: editor.lua("return _G.picker_calls"), what="picker")
        assert calls[0]["prompt"] == "agentd wants to write note.txt"
        win = calls[0]["win"]
        assert editor.lua("return vim.api.nvim_win_is_valid(...)", win)
        other.go.set()
        editor.wait_run_end(2)
        assert not editor.lua("return vim.api.nvim_win_is_valid(...)", win)
        assert (home.project / "note.txt").exists()
    finally:
        other.close()
        editor.finish()
