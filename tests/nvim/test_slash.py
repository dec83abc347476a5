"""Custom commands in Neovim (0.12 and 0.7): `/` completes their names in the chat's input
buffer (omnifunc, opened by itself on `/`), a command is run by the daemon, the transcript
shows what was typed with its expansion folded."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nvim.harness import Editor

pytestmark = pytest.mark.e2e  # real nvim and a real daemon


def write_commands(editor: Editor) -> Path:
    folder = editor.home.config_dir / "agentd" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 please."
    )
    (folder / "release-notes.md").write_text("Write the release notes.")
    return folder


def popup_words(editor: Editor) -> list[str]:
    return [
        str(w)
        for w in editor.lua(
            "return vim.tbl_map(function(i) return i.word end,"
            " vim.fn.complete_info({'items'}).items)"
        )
    ]


def test_slash_completes_commands_in_the_input_buffer(editor: Editor) -> None:
    folder = write_commands(editor)
    editor.nvim.command("AgentChat")
    editor.wait_for(lambda: len(editor.lua("return require('agentd.slash').items")) == 2)
    editor.nvim.input("i/")
    editor.wait_for(lambda: editor.lua("return vim.fn.pumvisible()") == 1, what="the popup on /")
    assert popup_words(editor) == ["/release-notes ", "/review "]
    editor.nvim.input("rev")
    editor.wait_for(lambda: editor.nvim.current.line == "/rev")
    editor.nvim.input("<C-n>")  # the first match of what was typed: the menu narrowed
    editor.wait_for(lambda: editor.nvim.current.line == "/review ")
    editor.nvim.input("notes.txt<Esc>")
    editor.wait_for(lambda: editor.nvim.api.get_mode()["mode"] == "n")
    editor.nvim.input("<CR>")
    text = editor.wait_run_end()
    assert "▍You\n/review notes.txt\n▸ expanded\n┊ Review notes.txt please." in text

    (folder / "standup.md").write_text("Summarise yesterday.")  # read on the next InsertEnter
    editor.nvim.current.buffer[:] = ["/st"]
    editor.nvim.input("A")
    editor.wait_for(lambda: len(editor.lua("return require('agentd.slash').items")) == 3)
    editor.nvim.input("<C-x><C-o>")
    editor.wait_for(lambda: popup_words(editor) == ["/standup "], what="the omnifunc menu")
    editor.nvim.input("<C-n>")
    editor.wait_for(lambda: editor.nvim.current.line == "/standup ", what="omnifunc completion")
    editor.nvim.input("<Esc>")
    editor.nvim.current.buffer[:] = ["say /rev"]  # only a line's first word is a command
    editor.nvim.current.window.cursor = (1, 8)
    assert editor.lua("return _G.agentd_complete_command(1, '')") == -3
