"""What the chat buffer says, in real Neovim (0.12 and 0.7) against a real daemon: words, not
the protocol's enum names (an approval's outcome, why a run ended); a subagent's steps under
its task call; the session's title kept after :AgentRewind."""

from __future__ import annotations

import pytest

from tests.harness import Home
from tests.nvim.harness import Editor, EditorFactory
from tests.rewind.scenarios import KEEP_BEFORE
from tests.rewind.scenarios import SCENARIOS as REWIND_SCENARIOS
from tests.scenarios import tool_call
from tests.subagents.scenarios import task_call

pytestmark = pytest.mark.e2e  # real nvim and a real daemon

SUBAGENT = [
    {
        "name": "delegate-scribe",
        "trigger": "delegate the note",
        "steps": [
            {
                "response": {
                    "content": "Delegating.",
                    "tool_calls": [task_call("task_s", "child scribe: write it", title="Scribe")],
                }
            },
            {"response": {"content": "The scribe wrote it."}},
        ],
    },
    {
        "name": "child-scribe",
        "trigger": "child scribe",
        "steps": [
            {
                "response": {
                    "content": "Writing.",
                    "tool_calls": [
                        tool_call("write", {"path": "child.txt", "content": "c\n"}, "c_1")
                    ],
                }
            },
            {"response": {"content": "Child wrote child.txt."}},
        ],
    },
]


def test_outcomes_and_stop_reasons_are_words(editor_factory: EditorFactory) -> None:
    editor: Editor = editor_factory(permission_mode="ask")
    editor.nvim.command("Agent write a note")
    editor.answer("1\r")
    text = editor.wait_run_end()
    assert "⚑ allowed once" in text, text
    assert "── done · " in text, text
    for name in ("allow_once", "end_turn", "reject_once"):
        assert name not in text, text


def test_a_subagents_steps_show_under_its_task(home: Home, editor_factory: EditorFactory) -> None:
    home.use_scenarios(SUBAGENT)
    editor = editor_factory()
    editor.nvim.command("Agent delegate the note")
    text = editor.wait_run_end()
    assert (home.project / "child.txt").read_text() == "c\n"
    lines = text.split("\n")
    task = next(i for i, line in enumerate(lines) if line.startswith("▸ ✓ task"))
    body = lines[task + 1 : task + 4]
    assert body == ["│ › Writing.", "│ ✓ write  child.txt", "│ › Child wrote child.txt."], text
    editor.finish()


SLOW_LOAD = """
-- The answer to session/load comes after its replayed events were drawn (a loaded machine).
local client = require("agentd.client")
local call = client.call
client.call = function(method, params, cb)
  if method ~= "session/load" then return call(method, params, cb) end
  return call(method, params, function(err, result)
    vim.defer_fn(function() cb(err, result) end, 300)
  end)
end
"""


def test_the_title_stays_after_a_rewind(home: Home, editor_factory: EditorFactory) -> None:
    """An untitled session is shown under its first prompt; after :AgentRewind (which loads
    the session again) it still is, whichever comes first: the replay or the answer."""
    home.use_scenarios(REWIND_SCENARIOS)
    (home.project / "keep.txt").write_text(KEEP_BEFORE)
    editor = editor_factory()
    editor.lua(SLOW_LOAD)
    editor.nvim.command("Agent rewind turn one")
    editor.wait_run_end(1)
    editor.nvim.command("Agent rewind turn two")
    editor.wait_run_end(2)
    assert editor.transcript().split("\n")[0].startswith("agentd · rewind turn one · ")
    editor.nvim.command("AgentRewind")
    editor.answer("1\r")
    editor.wait_for(
        lambda: (
            "rewind-two done." not in editor.transcript()
            and "rewind-one done." in editor.transcript()
        ),
        what="the transcript without the second turn",
    )
    editor.wait_for(
        lambda: any("rewound:" in note for note in editor.notes()), what="the rewind's summary"
    )
    editor.wait_for(
        lambda: editor.lua("return require('agentd.client').session.provider") == "mock",
        what="the session/load answer",
    )
    header = editor.transcript().split("\n")[0]
    assert header.startswith("agentd · rewind turn one · "), header
    editor.finish()
