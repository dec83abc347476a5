"""The chat: a prompt round trip with tool calls, folds, errors and retries as notifications."""

from __future__ import annotations

import pytest

from tests.nvim.harness import Editor, EditorFactory, Home

pytestmark = pytest.mark.e2e  # real nvim and a real daemon


def test_round_trip_with_tool_calls(editor: Editor) -> None:
    editor.nvim.command("Agent hello world")
    text = editor.wait_run_end()
    assert "▍You\nhello world" in text
    assert "I'll create a hello world Python script for you." in text
    lines = text.splitlines()
    write = next(line for line in lines if line.startswith("▸ ✓ write  hello.py"))
    bash = next(line for line in lines if line.startswith("▸ ✓ bash  python3 hello.py"))
    assert write.endswith("s")
    assert "+1 -0" in write
    assert bash.split()[-1].endswith("s")
    assert "│ Hello, World!" in lines
    assert lines[-1].startswith("── done · 3 turns")
    editor.wait_for(lambda: editor.transcript().startswith("agentd · hello world · mock/"))
    assert (editor.home.project / "hello.py").exists()


def test_chat_window_folds_tool_output(editor: Editor) -> None:
    editor.nvim.command("AgentChat")
    chat_win, input_win = editor.lua("local c, i = require('agentd.chat').windows(); return {c, i}")
    assert editor.nvim.current.window.handle == input_win
    editor.nvim.current.buffer[:] = ["hello world"]
    editor.nvim.input("<CR>")
    text = editor.wait_run_end()
    rows = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("▸ ✓ bash")]
    folded = editor.lua(
        "local win, row = ...; return vim.api.nvim_win_call(win, function()"
        " return {vim.fn.foldclosed(row), vim.fn.foldclosedend(row)} end)",
        chat_win,
        rows[0],
    )
    assert folded == [rows[0], rows[0] + 1]
    status = editor.lua(
        "return vim.api.nvim_eval_statusline(vim.wo[...].statusline, {winid = ...}).str", chat_win
    )
    assert status.startswith("agentd: idle mock/")
    chat_buf = editor.lua("return vim.api.nvim_win_get_buf(...)", chat_win)
    assert editor.lua("return vim.b[...].current_syntax", chat_buf) == "agentd"
    assert editor.nvim.current.buffer[:] == [""]
    editor.nvim.command("AgentChat")
    assert editor.lua("return require('agentd.chat').windows()") is None


def test_thinking_is_folded_text(editor: Editor) -> None:
    editor.nvim.command("Agent think first")
    text = editor.wait_run_end()
    assert "▸ thinking\n┊ The user wants me to think" in text
    assert "After thinking it over: the answer is 42." in text


def test_retry_and_error_are_notifications(editor: Editor) -> None:
    editor.nvim.command("Agent rate limited")
    editor.wait_run_end()
    assert any(n.startswith("3 agentd: retrying (1/") for n in editor.notes())
    editor.nvim.command("Agent server error")
    text = editor.wait_run_end(2)
    assert any(n.startswith("4 agentd: ") and "500" in n for n in editor.notes())
    assert "✗ " in text


def test_missing_executable_is_a_clear_error(editor_factory: EditorFactory) -> None:
    editor = editor_factory(agentd="/nonexistent/agentd")
    editor.nvim.command("Agent hello")
    editor.wait_for(editor.notes, what="a notification")
    assert editor.notes() == [
        '4 agentd: session/new failed: cannot find "/nonexistent/agentd" '
        "(set cmd/agentctl/agentd in setup())"
    ]


def test_a_dead_private_daemon_is_reported_and_replaced(editor: Editor) -> None:
    editor.nvim.command("Agent sleep in bash")
    editor.wait_for(lambda: "▸ ⋯ bash  sleep 30" in editor.transcript(), what="bash running")
    editor.lua("vim.loop.kill(require('agentd.client').conn.pid, 9)")
    ended = "4 agentd: the connection to agentd ended during a run; see :AgentLog"
    editor.wait_for(lambda: ended in editor.notes(), what="the notification")
    assert not editor.running()
    editor.nvim.command("Agent how are you")
    text = editor.wait_for(
        lambda: "I'm doing well" in editor.transcript() and editor.transcript(), what="reply"
    )
    assert "sleep in bash" in text


def test_shared_mode_reconnects_and_resumes_the_stream(
    home: Home, socket_daemon: None, editor_factory: EditorFactory
) -> None:
    editor = editor_factory(connection="shared", socket=str(home.socket))
    try:
        editor.nvim.command("Agent be slow")
        editor.wait_for(lambda: "This reply" in editor.transcript(), what="streaming")
        editor.lua("vim.loop.kill(require('agentd.client').conn.pid, 9)")
        text = editor.wait_run_end()
        assert "so there is plenty of time to cancel it before it ends." in text
        assert "3 agentd: lost the connection to agentd; reconnecting" in editor.notes()
        assert text.splitlines()[-1].startswith("── done")
    finally:
        editor.finish()


def test_agent_log_shows_the_connection(editor: Editor) -> None:
    editor.nvim.command("Agent how are you")
    editor.wait_run_end()
    editor.nvim.command("AgentLog")
    lines = editor.nvim.current.buffer[:]
    assert editor.nvim.current.buffer.name == "agentd://log"
    assert any(line.endswith("starting agentd serve --stdio") for line in lines)
    assert any("connected to agentd" in line for line in lines)
    assert any('"session created"' in line for line in lines)


def test_a_second_prompt_during_the_first_steers_the_same_session(editor: Editor) -> None:
    editor.nvim.command("Agent hello world")
    editor.nvim.command("Agent how are you")
    text = editor.wait_run_end()
    assert "2 agentd: queued for the running agent" in editor.notes()
    assert "▍You\nhello world" in text
    assert "▍You\nhow are you" in text
    assert len(list((editor.home.sessions).rglob("*.jsonl"))) == 1


def test_default_shared_connection_starts_the_daemon(
    editor_factory: EditorFactory, home: Home
) -> None:
    editor = editor_factory(connection="shared")
    pid_file = home.root / "run" / "agentd" / "agentd.pid"
    try:
        editor.nvim.command("Agent how are you")
        text = editor.wait_run_end()
        assert "I'm doing well" in text
        assert pid_file.exists()
    finally:
        editor.finish()  # the home's cleanup stops the daemon the bridge started


def test_agent_without_words_asks_for_the_prompt(editor: Editor) -> None:
    editor.nvim.input(":Agent\r")  # typed: the command waits in vim.ui.input
    editor.answer("how are you\r")
    assert "▍You\nhow are you" in editor.wait_run_end()
