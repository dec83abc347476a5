"""Approvals through vim.ui.select: answered in Neovim, or decided by another client (which
closes the prompt Neovim shows)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.agentctl.screen import Screen
from tests.harness import scaled
from tests.nvim.harness import (
    PLUGIN,
    VENV_BIN,
    Editor,
    EditorFactory,
    Home,
    OtherClient,
    nvim_version,
)

CAPTURES = Path(__file__).resolve().parents[2] / "test-artifacts" / "nvim"

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
    assert "⚑ allowed once" in text
    assert "▸ ✓ write  note.txt" in text


def test_reject_keeps_the_file_untouched(editor_factory: EditorFactory) -> None:
    editor: Editor = editor_factory(permission_mode="ask")
    editor.nvim.command("Agent write a note")
    editor.answer("3\r")
    text = editor.wait_run_end()
    assert not (editor.home.project / "note.txt").exists()
    assert "⚑ rejected" in text
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
        assert "⚑ allowed once" in text
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


CAPTURING_SELECT = """
-- Record, when the prompt opens, what the chat shows and the choices offered.
_G.seen = {}
vim.ui.select = function(items, opts, on_choice)
  local buf = require('agentd.transcript').buf
  local labels = {}
  for i, item in ipairs(items) do labels[i] = opts.format_item(item) end
  table.insert(_G.seen, {
    chat = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
    shown = #vim.fn.win_findbuf(buf) > 0,
    labels = labels,
    prompt = opts.prompt,
  })
  _G.choose = function(i) on_choice(items[i], i) end
end
"""


def test_the_change_is_in_the_chat_before_the_prompt_opens(
    home: Home, editor_factory: EditorFactory
) -> None:
    """An edit's approval: when the prompt opens, the chat (in a window) already shows the
    diff under the approval line, and "always" names the rule it adds."""
    lines = "".join(f"limit_{n} = {n}\n" for n in range(10))
    (home.project / "limits.py").write_text(lines)
    args = {"path": "limits.py", "old_string": "limit_5 = 5\n", "new_string": "limit_5 = 50\n"}
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "edit", "arguments": json.dumps(args)},
    }
    home.use_scenarios(
        [
            {
                "name": "raise-limit",
                "trigger": "raise limit five",
                "steps": [
                    {"response": {"content": "Raising it.", "tool_calls": [call]}},
                    {"response": {"content": "Raised."}},
                ],
            }
        ]
    )
    editor: Editor = editor_factory(permission_mode="ask")
    editor.lua(CAPTURING_SELECT)
    editor.nvim.command("Agent raise limit five")
    seen = editor.wait_for(lambda: editor.lua("return _G.seen"), what="the prompt")[0]
    assert seen["shown"], "the chat window is open when the prompt opens"
    chat = seen["chat"]
    start = chat.index("⚑ approval needed: edit limits.py")
    assert chat[start + 1 : start + 10] == [
        "▏ limits.py  +1 -1",
        "▏ @@ -3,7 +3,7 @@",
        "▏  limit_2 = 2",
        "▏  limit_3 = 3",
        "▏  limit_4 = 4",
        "▏ -limit_5 = 5",
        "▏ +limit_5 = 50",
        "▏  limit_6 = 6",
        "▏  limit_7 = 7",
    ], chat
    assert seen["labels"][1] == "Allow always (adds edit for this session)"
    editor.lua("_G.choose(1)")
    text = editor.wait_run_end()
    assert "limit_5 = 50" in (home.project / "limits.py").read_text()
    assert "⚑ allowed once" in text
    assert "▏ +limit_5 = 50" in text  # the preview stays above the decision


def test_on_a_real_screen_the_chat_is_drawn_under_the_prompt(
    home: Home, nvim_bin: str, tmp_path: Path
) -> None:
    """Neovim in a terminal (tmux): when the built-in prompt of the first approval is up, the
    screen already shows the chat with the change to approve (0.12 used to draw the prompt
    over an empty screen)."""
    (home.project / "note.txt").unlink(missing_ok=True)
    env = dict(home.env, PATH=f"{VENV_BIN}{os.pathsep}{home.env.get('PATH', '')}")
    setup = (
        "lua require('agentd').setup({connection='stdio', provider='mock', permission_mode='ask'})"
    )
    command = [nvim_bin, "--clean", "--cmd", f"set rtp^={PLUGIN}", "-c", setup]
    screen = Screen([*command, "-c", "Agent write a note"], env, home.project)
    try:
        shown = screen.wait_for("Allow once")
        CAPTURES.mkdir(parents=True, exist_ok=True)
        (CAPTURES / f"nvim-approval-{nvim_version(nvim_bin)}.txt").write_text(shown + "\n")
        assert "⚑ approval needed: write note.txt" in shown, shown
        assert "▏ +noted" in shown, shown
        assert "agentd wants to write note.txt" in shown, shown
        screen.keys("1", "Enter")
        screen.wait_for("⚑ allowed once")
    finally:
        screen.close()
    assert (home.project / "note.txt").read_text() == "noted\n"
