"""The ``ask_user`` tool's questions in ``agentd acp``, driven by the official ACP Python
SDK as the editor, both ways: an editor that declares form elicitation gets one
``elicitation/create`` form (its answers are the tool result), any other editor one
``session/request_permission`` per question with one option per answer."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    DeclineElicitationResponse,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    RequestPermissionResponse,
)

import acp
from tests.acp.conftest import Box, Editor
from tests.e2e.test_questions import ASK

pytestmark = pytest.mark.e2e


@dataclass
class FormEditor(Editor):
    """An editor with form elicitation; ``content`` is its user's answer (None: decline)."""

    content: dict[str, Any] | None = None
    forms: list[tuple[str, Any]] = field(default_factory=list)

    def capabilities(self) -> ClientCapabilities:
        form = ElicitationCapabilities(form=ElicitationFormCapabilities())
        return ClientCapabilities(elicitation=form)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.forms.append((message, mode))
        if self.content is None:
            return DeclineElicitationResponse(action="decline")
        return AcceptElicitationResponse(action="accept", content=self.content)


def _tool_result(box: Box, session_id: str) -> str:
    [path] = list(Path(box.env["XDG_DATA_HOME"]).rglob(f"*_{session_id}.jsonl"))
    for line in path.read_text().splitlines():
        message = json.loads(line).get("message", {})
        if message.get("role") == "tool_result":
            return "".join(block.get("text", "") for block in message["content"])
    raise AssertionError("no tool result")


@contextlib.asynccontextmanager
async def _spawn(box: Box, editor: Editor) -> AsyncIterator[acp.ClientSideConnection]:
    """``agentd acp`` spawned by the SDK with its unstable methods (elicitation) served."""
    argv = box.argv()
    async with acp.spawn_agent_process(
        editor, argv[0], *argv[1:], env=box.env, cwd=str(box.project), use_unstable_protocol=True
    ) as (conn, _process):
        await conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
        yield conn


async def _ask(box: Box, editor: Editor) -> str:
    box.use_scenarios([ASK])
    async with _spawn(box, editor) as conn:
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("ask me about the plan")]
        )
    assert reply.stop_reason == "end_turn"
    return _tool_result(box, session.session_id)


async def test_an_editor_with_forms_gets_one_elicitation(box: Box) -> None:
    editor = FormEditor(content={"answer1": "Postgres", "answer2": ["Search"], "other2": "CSV"})
    text = await _ask(box, editor)
    [(message, mode)] = editor.forms
    assert "Which features go in the first release?" in message
    assert mode.session_id
    assert mode.tool_call_id == "ask_1"
    schema = mode.requested_schema.model_dump(by_alias=True, exclude_none=True)
    assert [o["const"] for o in schema["properties"]["answer1"]["oneOf"]] == ["Postgres", "SQLite"]
    assert text == (
        "The user answered:\n"
        '"Which database should the service use?" = Postgres\n'
        '"Which features go in the first release?" = Search, Other: CSV'
    )
    assert not editor.permission_requests


async def test_a_declined_form_declines(box: Box) -> None:
    text = await _ask(box, FormEditor(content=None))
    assert text.startswith("No answer from the user: the user declined to answer")


async def test_without_forms_each_question_is_a_permission_request(box: Box) -> None:
    asked: list[Any] = []

    @dataclass
    class Picker(Editor):
        async def request_permission(
            self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
        ) -> RequestPermissionResponse:
            asked.append((tool_call, options))
            pick = options[1] if len(asked) == 1 else options[2]  # SQLite, then Export
            return RequestPermissionResponse(
                outcome=AllowedOutcome(outcome="selected", option_id=pick.option_id)
            )

    text = await _ask(box, Picker())
    assert [o.name for o in asked[0][1]] == ["Postgres", "SQLite"]
    assert [o.name for o in asked[1][1]] == ["Auth", "Search", "Export"]
    assert asked[0][0].title == "Database: Which database should the service use?"
    assert text == (
        "The user answered:\n"
        '"Which database should the service use?" = SQLite\n'
        '"Which features go in the first release?" = Export'
    )
