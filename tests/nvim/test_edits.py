"""Buffers of files the agent edits are reloaded; :AgentDiff shows the change."""

from __future__ import annotations

import pytest

from tests.nvim.harness import Editor

pytestmark = pytest.mark.e2e  # real nvim and a real daemon


def test_buffer_reloads_after_an_edit_and_diff_shows_it(editor: Editor) -> None:
    readme = editor.home.project / "README.txt"
    readme.write_text("old line\n")
    editor.nvim.command("edit README.txt")
    buf = editor.nvim.current.buffer
    editor.nvim.command("Agent fix the readme")
    text = editor.wait_run_end()
    assert "▸ ✓ edit  README.txt  +1 -1" in text
    assert readme.read_text() == "new line\n"
    editor.wait_for(lambda: buf[:] == ["new line"], what="reloaded buffer")
    assert not editor.lua("return vim.bo[...].modified", buf.handle)

    editor.nvim.command("AgentDiff")
    windows = editor.nvim.current.tabpage.windows
    assert [w.options["diff"] for w in windows] == [True, True]
    assert [w.buffer[:] for w in windows] == [["old line"], ["new line"]]

    editor.nvim.command("AgentDiff!")
    lines = editor.nvim.current.buffer[:]
    assert "-old line" in lines
    assert "+new line" in lines
    assert editor.nvim.current.buffer.options["filetype"] == "diff"


def test_unsaved_changes_are_not_overwritten(editor: Editor) -> None:
    (editor.home.project / "README.txt").write_text("old line\n")
    editor.nvim.command("edit README.txt")
    buf = editor.nvim.current.buffer
    buf[:] = ["my unsaved words"]
    editor.nvim.command("Agent fix the readme")
    editor.wait_run_end()
    assert buf[:] == ["my unsaved words"]
    assert any(
        "README.txt changed on disk but its buffer has unsaved changes" in n for n in editor.notes()
    )


def test_agent_send_and_fix_carry_file_and_lines(editor: Editor) -> None:
    (editor.home.project / "code.py").write_text("a = 1\nb = undefined\nc = 3\n")
    editor.nvim.command("edit code.py")
    editor.nvim.command("2,3AgentSend how are you")
    text = editor.wait_run_end()
    assert "how are you\n\ncode.py lines 2-3:\n```python\nb = undefined\nc = 3\n```" in text
    editor.lua(
        "local ns = vim.api.nvim_create_namespace('t'); vim.diagnostic.set(ns, 0, {{lnum = 1,"
        " col = 4, severity = vim.diagnostic.severity.ERROR, message = 'undefined name',"
        " source = 'lint'}})"
    )
    editor.nvim.command("AgentFix")
    text = editor.wait_run_end(2)
    assert (
        "Fix these problems reported in code.py:\n- line 2, col 5: error: undefined name [lint]"
        in text
    )
