"""Skills through a real daemon, with the mock LLM on loopback so the requests can be read
back: the skill is listed in the ``skill`` tool's description, its body is in no request
until it is loaded, then its script runs through bash with the user's approval; an
untrusted project's skills give a warning naming ``agentctl trust``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import parse_scenarios
from agentd.protocol.methods import RequestPermissionParams
from tests.documents.skillfolders import PDF_SKILL, write_skill
from tests.harness import Home, new_session, run, stdio_client
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

PROVIDER = """
[providers.oai]
api = "openai"
base_url = "{url}"
models = ["mock-model"]
api_key_env = "OAI_TEST_KEY"
"""
SCRIPT = ".agentd/skills/pdf-forms/scripts/fields.py form.pdf"
SCENARIO = {
    "name": "use-skill",
    "trigger": "fill the form",
    "steps": [
        {
            "response": {
                "content": "",
                "tool_calls": [tool_call("skill", {"name": "pdf-forms"}, "k1")],
            }
        },
        {"response": {"content": "", "tool_calls": [tool_call("bash", {"command": SCRIPT}, "b1")]}},
        {"response": {"content": "Filled."}},
    ],
}


@pytest.fixture
async def llm() -> AsyncIterator[MockLLMServer]:
    async with MockLLMServer(parse_scenarios({"scenarios": [SCENARIO]})) as server:
        yield server


@pytest.fixture
def home() -> Any:
    with Home() as box:
        yield box


def _script() -> dict[str, str]:
    return {"scripts/fields.py": "#!/usr/bin/env python3\nprint('FIELDS: name, date')\n"}


async def test_progressive_loading_and_an_approved_script(home: Home, llm: MockLLMServer) -> None:
    home.project_config(top='permission_mode = "ask"\n', tables=PROVIDER.format(url=llm.url))
    home.env["OAI_TEST_KEY"] = "oai-paired-key-123"
    write_skill(home.project / ".agentd" / "skills", "pdf-forms", PDF_SKILL, _script())
    home.trust()  # trust pins .agentd/skills: trust it as planted
    asked: list[RequestPermissionParams] = []

    async def approve(params: RequestPermissionParams) -> Any:
        asked.append(params)
        return "allow_once"

    async with stdio_client(home, permission_handler=approve) as client:
        sid = await new_session(client, home, provider="oai", model="mock-model")
        result, events = await run(client, sid, "fill the form")
    assert result["stopReason"] == "end_turn"
    first, after_skill, last = list(llm.requests)[-3:]
    (skill_spec,) = [t for t in first["tools"] if t["function"]["name"] == "skill"]
    assert "- pdf-forms: Fill in PDF forms" in skill_spec["function"]["description"]
    assert "SECRET-BODY-MARKER" not in str(first)
    assert "SECRET-BODY-MARKER" in str(after_skill)
    assert [p.tool for p in asked] == ["bash"]
    ends = {e["event"]["toolCallId"]: e["event"] for e in events
            if e["event"]["type"] == "tool_execution_end"}  # fmt: skip
    assert ends["k1"]["details"] == {
        "type": "skill", "name": "pdf-forms", "source": "project",
        "path": str(home.project / ".agentd" / "skills" / "pdf-forms"),
        "allowedTools": ["bash", "read", "skill"],
    }  # fmt: skip
    assert "FIELDS: name, date" in str(last)


async def test_untrusted_project_skills_warn(home: Home, llm: MockLLMServer, tmp_path: Any) -> None:
    other = home.root / "other"
    (other / ".git").mkdir(parents=True)
    write_skill(other / ".agents" / "skills", "pdf-forms", PDF_SKILL)
    async with stdio_client(home) as client:
        info = await client.call("session/new", {"cwd": str(other), "provider": "mock"})
        state = await client.call("session/state", {"sessionId": info["sessionId"]})
    text = str(info) + str(state)
    assert "agentctl trust" in text
    assert "not trusted" in text
