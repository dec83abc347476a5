"""The ``ask_user`` tool's questions in ``agentd lsp``: one ``window/showMessageRequest`` per
question, its options the buttons, the buttons chosen the answer; a dismissed message
declines."""

from __future__ import annotations

import json

from tests.e2e.test_questions import ASK
from tests.lsp.conftest import Box, Editor, spawn


def _tool_result(box: Box) -> str:
    [path] = list(box.sessions.rglob("*.jsonl"))
    for line in path.read_text().splitlines():
        message = json.loads(line).get("message", {})
        if message.get("role") == "tool_result":
            return "".join(block.get("text", "") for block in message["content"])
    raise AssertionError("no tool result")


async def test_each_question_is_a_message_with_its_options(box: Box) -> None:
    box.use_scenarios([ASK])
    editor = Editor(approval=["SQLite", "Search"])
    async with spawn(box, editor):
        answer = await editor.run("agentd.prompt", {"prompt": "ask me about the plan"})
    assert answer["stopReason"] == "end_turn"
    assert editor.approvals == [
        "agentd asks: Database: Which database should the service use?",
        "agentd asks: Features: Which features go in the first release?",
    ]
    assert _tool_result(box) == (
        "The user answered:\n"
        '"Which database should the service use?" = SQLite\n'
        '"Which features go in the first release?" = Search'
    )


async def test_a_dismissed_message_declines(box: Box) -> None:
    box.use_scenarios([ASK])
    editor = Editor(approval=None)
    async with spawn(box, editor):
        await editor.run("agentd.prompt", {"prompt": "ask me about the plan"})
    assert len(editor.approvals) == 1
    assert _tool_result(box).startswith("No answer from the user: the user declined to answer")
