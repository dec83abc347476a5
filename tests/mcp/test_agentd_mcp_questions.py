"""``agentd mcp`` asks its MCP host the run's questions (the ``ask_user`` tool) through MCP
elicitation, driven by the official SDK's client: a host with form elicitation gets one
form per question request and its answers are the tool result; a host without it is never
asked and the tool answers at once that no user can answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.types import ElicitRequestFormParams, ElicitResult

from tests.e2e.test_questions import ASK
from tests.harness import Home
from tests.mcp.test_agentd_mcp_host import host

pytestmark = pytest.mark.e2e


def _tool_result(home: Home, session_id: str) -> str:
    [path] = list(home.sessions.rglob(f"*{session_id}*.jsonl"))
    for line in path.read_text().splitlines():
        message = json.loads(line).get("message", {})
        if message.get("role") == "tool_result":
            return "".join(block.get("text", "") for block in message["content"])
    raise AssertionError("no tool result")


async def test_the_host_answers_a_single_and_a_multi_select_question(home: Home) -> None:
    home.use_scenarios([ASK])
    forms: list[ElicitRequestFormParams] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        forms.append(params)
        content = {"answer1": "SQLite", "answer2": ["Auth", "Export"], "other2": "and docs"}
        return ElicitResult(action="accept", content=content)

    async with host(home, elicitation_callback=elicit) as (client, _shook):
        done = await client.call_tool(
            "agentd_run", {"prompt": "ask me about the plan", "cwd": str(home.project)}
        )
    assert not done.is_error, done
    [form] = forms
    schema = form.requested_schema
    assert schema["properties"]["answer1"]["oneOf"][1] == {"const": "SQLite", "title": "SQLite"}
    assert schema["properties"]["answer2"]["type"] == "array"
    assert "Which database should the service use?" in form.message
    assert _tool_result(home, done.structured_content["sessionId"]) == (
        "The user answered:\n"
        '"Which database should the service use?" = SQLite\n'
        '"Which features go in the first release?" = Auth, Export, Other: and docs'
    )


async def test_a_host_without_elicitation_is_never_asked(home: Home) -> None:
    home.use_scenarios([ASK])
    async with host(home) as (client, _shook):
        done = await client.call_tool(
            "agentd_run", {"prompt": "ask me about the plan", "cwd": str(home.project)}
        )
    assert not done.is_error, done
    text = _tool_result(home, done.structured_content["sessionId"])
    assert text.startswith("No answer from the user: no user can answer")


async def test_a_declined_form_declines(home: Home) -> None:
    home.use_scenarios([ASK])

    async def decline(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    async with host(home, elicitation_callback=decline) as (client, _shook):
        done = await client.call_tool(
            "agentd_run", {"prompt": "ask me about the plan", "cwd": str(home.project)}
        )
    text = _tool_result(home, done.structured_content["sessionId"])
    assert text.startswith("No answer from the user: the user declined to answer")
