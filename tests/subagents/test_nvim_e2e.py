"""Neovim shows a task: its line in the chat buffer names the subagent's session, the
child's final text is the call's output, and the child's own stream stays out of the buffer.
Real nvim (both builds) and a real daemon."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.nvim.harness import Editor, Home, find_build, make_home
from tests.subagents.scenarios import SUBAGENT_SCENARIOS

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["pip", "system"])
def editor(request: pytest.FixtureRequest) -> Iterator[Editor]:
    home: Home = make_home()
    home.use_scenarios(SUBAGENT_SCENARIOS)
    made = Editor(find_build(request.param), home)
    try:
        yield made
        assert made.lua_errors() == [], "Lua errors in :messages"
    finally:
        made.close()
        home.cleanup()


def test_a_task_line_names_the_childs_session_and_shows_its_text(editor: Editor) -> None:
    editor.nvim.command("Agent delegate the answer")
    text = editor.wait_run_end()
    print(text)  # the chat buffer, for a person reading the test log
    lines = text.splitlines()
    task = next(line for line in lines if line.startswith("▸ ✓ task"))
    assert "subagent general · session " in task
    assert "│ › The answer is 42." in lines  # the child's reply, one of its steps
    assert lines.count("The answer is 42.") == 0  # the child's own reply is not streamed here
    assert "The subagent says the answer is 42." in text
