"""The agent's questions in Neovim: ``session/askQuestion`` through vim.ui.select, one
question after another (a multi-select: picks tick options until "Done"), "Other…" a line
of one's own. The transcript has a line per question, settled in place with the answers, and
again when the session is loaded (its replay). Real nvim, a real daemon, the mock LLM."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_questions import ASK
from tests.nvim.harness import Editor, EditorFactory, Home

pytestmark = pytest.mark.e2e
SETTLED = "? Database: SQLite · Features: Auth, Export"


def _tool_result(home: Home) -> str:
    [path] = list(home.sessions.rglob("*.jsonl"))
    for line in path.read_text().splitlines():
        message = json.loads(line).get("message", {})
        if message.get("role") == "tool_result":
            return "".join(block.get("text", "") for block in message["content"])
    raise AssertionError("no tool result")


def test_a_single_and_a_multi_select_question(home: Home, editor_factory: EditorFactory) -> None:
    home.use_scenarios([ASK])
    editor: Editor = editor_factory()
    editor.nvim.command("Agent ask me about the plan")
    editor.answer("2\r")  # SQLite
    editor.answer("1\r")  # tick Auth
    editor.answer("3\r")  # tick Export
    editor.answer("5\r")  # Done
    shown = editor.wait_run_end()
    assert _tool_result(home) == (
        "The user answered:\n"
        '"Which database should the service use?" = SQLite\n'
        '"Which features go in the first release?" = Auth, Export'
    )
    assert SETTLED in shown.splitlines()  # the question's line, settled in place
    assert "(waiting for your answer)" not in shown
    session_id = editor.lua("return require('agentd.client').session.sessionId")
    editor.lua("require('agentd.transcript').clear()")
    assert SETTLED not in editor.transcript()
    editor.lua("require('agentd.sessions').load(...)", session_id)  # replayed from the file
    editor.wait_for(lambda: SETTLED in editor.transcript().splitlines(), what="the replay")
    assert editor.lua_errors() == []


def test_other_and_a_dismissed_prompt(home: Home, editor_factory: EditorFactory) -> None:
    home.use_scenarios([ASK])
    editor: Editor = editor_factory()
    editor.nvim.command("Agent ask me about the plan")
    editor.answer("3\r")  # Other…
    editor.answer("CockroachDB\r")
    editor.answer("\x1b")  # the second question dismissed: the request is declined
    shown = editor.wait_run_end()
    assert _tool_result(home).startswith("No answer from the user: the user declined to answer")
    assert "? not answered: the user declined to answer" in shown.splitlines()
    assert editor.lua_errors() == []
