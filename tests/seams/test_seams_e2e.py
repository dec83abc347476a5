"""Where a session is put together: a session's base URL kept across a model change and a
command's model, and one list of warnings for ``session/new`` and ``session/load``. Real
daemon (``agentd --stdio``), real HTTP provider against a mock LLM in this process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.mockllm import MockLLMServer
from tests.harness import Home, new_session, run, stdio_client

pytestmark = pytest.mark.e2e

DEAD = "http://127.0.0.1:9/v1"
"""The configured base URL: nothing listens there, so a request that went there fails."""

PROVIDER = f"""
[providers.oai]
api = "openai"
base_url = "{DEAD}"
models = ["mock-model", "big-model"]
api_key_env = "OAI_TEST_KEY"
"""


@pytest.fixture
def home() -> AsyncIterator[Home]:
    with Home() as box:
        yield box  # type: ignore[misc]


@pytest.fixture
async def llm(home: Home) -> AsyncIterator[MockLLMServer]:
    async with MockLLMServer() as server:
        home.project_config(tables=PROVIDER)
        home.env["OAI_TEST_KEY"] = "oai-test-key-123"
        yield server


async def test_set_model_keeps_the_sessions_base_url(home: Home, llm: MockLLMServer) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="oai", model="mock-model", baseUrl=llm.url)
        result, _ = await run(client, sid, "hello world")
        assert result["stopReason"] == "end_turn", result
        await client.call("session/setModel", {"sessionId": sid, "model": "big-model"})
        result, _ = await run(client, sid, "hello world")
        assert result["stopReason"] == "end_turn", result  # not sent to the configured URL
        assert llm.requests[-1]["model"] == "big-model"


async def test_a_command_model_keeps_the_sessions_base_url(home: Home, llm: MockLLMServer) -> None:
    folder = home.config_dir / "agentd" / "commands"
    folder.mkdir(parents=True)
    (folder / "deep.md").write_text("---\nmodel: big-model\n---\nThink hard about $1.")
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="oai", model="mock-model", baseUrl=llm.url)
        result, _ = await run(client, sid, "/deep caching")
        assert result["stopReason"] == "end_turn", result
        assert llm.requests[-1]["model"] == "big-model"


def _bad_profile(project: Path) -> None:
    agents = project / ".agentd" / "agents"
    agents.mkdir(parents=True)
    (agents / "nameless.md").write_text("---\ntools: read\n---\nNo name, no description.\n")


async def test_new_answers_the_warnings_load_answers(home: Home) -> None:
    _bad_profile(home.project)
    async with stdio_client(home) as client:
        info = await client.call(
            "session/new",
            {"cwd": str(home.project), "provider": "mock", "tools": ["read", "task"]},
        )
        assert any("nameless" in text for text in info["warnings"]), info["warnings"]
        sid = info["sessionId"]
        await client.call("session/close", {"sessionId": sid})
        loaded = await client.call("session/load", {"sessionId": sid})
    assert sorted(info["warnings"]) == sorted(loaded["session"]["warnings"])
    assert sorted(info["warnings"]) == sorted(loaded["warnings"])
