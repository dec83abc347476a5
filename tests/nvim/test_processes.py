""":AgentProcesses in real Neovim against a real daemon: the session's background processes in
a scratch buffer (id, state, runtime, output size, command), `x` on a line kills that one
and the list follows; :AgentKill ID does the same by id."""

from __future__ import annotations

import pytest

from tests.e2e.test_orphans import running
from tests.harness import Home
from tests.nvim.harness import EditorFactory
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e  # real nvim and a real daemon

NEEDLE = "sleep 32771"


def _scenario(trigger: str, command: str) -> dict[str, object]:
    start = {"command": command, "background": True, "description": "nap"}
    return {
        "name": trigger,
        "trigger": trigger,
        "steps": [
            {"response": {"tool_calls": [tool_call("bash", start)]}},
            {"response": {"content": "Started."}},
        ],
    }


def _buffer(editor: object) -> list[str]:
    return list(
        editor.lua(  # type: ignore[attr-defined]
            "local b = require('agentd.processes').buf; "
            "return b and vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}"
        )
    )


def test_agent_processes_lists_and_kills(home: Home, editor_factory: EditorFactory) -> None:
    home.use_scenarios(
        [
            _scenario("nap in the background", f"echo napping; {NEEDLE}"),
            _scenario("nap once more", "sleep 32772"),
        ]
    )
    editor = editor_factory()
    editor.nvim.command("Agent nap in the background")
    editor.wait_run_end(1)
    editor.nvim.command("Agent nap once more")
    editor.wait_run_end(2)
    editor.nvim.command("AgentProcesses")
    editor.wait_for(lambda: len(_buffer(editor)) == 2, what="the two processes listed")
    first, second = _buffer(editor)
    assert first.split()[:2] == ["p1", "running"]
    assert first.endswith(f"echo napping; {NEEDLE} (nap)")
    assert second.split()[:2] == ["p2", "running"]
    assert editor.nvim.current.buffer.name == "agentd://processes"
    editor.nvim.current.window.cursor = (1, 0)
    editor.nvim.feedkeys("x")
    editor.wait_for(
        lambda: _buffer(editor)[0].split()[1:3] == ["killed", "(SIGTERM)"], what="p1 killed"
    )
    assert any("p1 killed (SIGTERM)" in note for note in editor.notes())
    editor.wait_for(lambda: not running(NEEDLE), what="the process gone")
    editor.nvim.command("AgentKill p2")
    editor.wait_for(lambda: _buffer(editor)[1].split()[1] == "killed", what="p2 killed")
    editor.nvim.command("AgentKill p9")
    editor.wait_for(lambda: any("cannot kill p9" in note for note in editor.notes()))
    editor.finish()
