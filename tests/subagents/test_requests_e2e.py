"""What the model is sent around a task: the task tool's description lists the profiles
(a user profile included), and the child calls the parent's provider and model with the
subagent instructions and its profile's tools. The mock LLM runs in the test process (real
HTTP on loopback) so the daemon's requests can be read back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import parse_scenarios
from tests.harness import Home, new_session, run, stdio_client
from tests.subagents.scenarios import SUBAGENT_SCENARIOS, task_call

pytestmark = pytest.mark.e2e

PROVIDER = """
[providers.oai]
api = "openai"
base_url = "{url}"
models = ["mock-model"]
api_key_env = "OAI_TEST_KEY"
"""

REVIEWER = """---
name: reviewer
description: Reviews code and reports problems; changes nothing.
tools: read, grep
---
Report each problem with its file and line.
"""


@pytest.fixture
async def llm(home: Home) -> AsyncIterator[MockLLMServer]:
    scenarios = [
        *SUBAGENT_SCENARIOS,
        {
            "name": "delegate-review",
            "trigger": "delegate a review",
            "steps": [
                {
                    "response": {
                        "content": "",
                        "tool_calls": [
                            task_call("task_r", "child alpha: review it", agent="reviewer")
                        ],
                    }
                },
                {"response": {"content": "Reviewed."}},
            ],
        },
    ]
    async with MockLLMServer(parse_scenarios({"scenarios": scenarios})) as server:
        home.project_config(tables=PROVIDER.format(url=server.url))
        home.env["OAI_TEST_KEY"] = "oai-paired-key-123"
        agents = home.config_dir / "agentd" / "agents"
        agents.mkdir(parents=True)
        (agents / "reviewer.md").write_text(REVIEWER)
        yield server


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def system_text(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


async def test_profiles_are_offered_and_the_child_uses_the_parents_model(
    home: Home, llm: MockLLMServer
) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="oai", model="mock-model")
        result, _ = await run(client, sid, "delegate a review")
    assert result["stopReason"] == "end_turn"
    parent_first, child_first = list(llm.requests)[:2]
    task = next(t for t in parent_first["tools"] if t["function"]["name"] == "task")
    description = task["function"]["description"]
    assert "- general: " in description
    assert "- explore: " in description
    assert "- reviewer: Reviews code and reports problems; changes nothing." in description
    # the child: the parent's endpoint and model, the profile's tools, subagent instructions
    assert child_first["model"] == "mock-model"
    assert tool_names(child_first) == ["read", "grep"]
    assert "You are a subagent" in system_text(child_first)
    assert "Report each problem with its file and line." in system_text(child_first)
    assert child_first["messages"][-1] == {"role": "user", "content": "child alpha: review it"}
    assert "You are a subagent" not in system_text(parent_first)
    assert len(llm.request_headers) >= 2
    assert llm.request_headers[1]["authorization"] == "Bearer oai-paired-key-123"


async def test_the_general_profile_gets_the_parents_tools_but_task(
    home: Home, llm: MockLLMServer
) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="oai", model="mock-model")
        await run(client, sid, "delegate the answer")
    parent_first, child_first = list(llm.requests)[:2]
    assert "task" in tool_names(parent_first)
    assert tool_names(child_first) == [n for n in tool_names(parent_first) if n != "task"]
