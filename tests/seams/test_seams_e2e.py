"""Where a session is put together: a session's base URL kept across a model change and a
command's model, and one list of warnings for ``session/new`` and ``session/load``. Real
daemon (``agentd --stdio``), real HTTP provider against a mock LLM in this process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import parse_scenarios
from tests.harness import Home, new_session, run, start_run, stdio_client

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
    home.trust()  # trust pins the profiles folder: trust it as planted
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


async def test_a_commands_model_is_the_runs_and_state_reports_it(
    home: Home, llm: MockLLMServer
) -> None:
    """While a command with a model of its own runs, ``session/state`` reports that model
    (the run's); the session's stays what it was, before, during and after."""
    folder = home.config_dir / "agentd" / "commands"
    folder.mkdir(parents=True)
    (folder / "think.md").write_text("---\nmodel: big-model\n---\nPlease take a moment.")
    pause = {"chunk_delay_ms": 200, "chunk_size": 4, "response": {"content": "Thinking it over."}}
    slow = parse_scenarios({"scenarios": [{"name": "slow", "trigger": "moment", "steps": [pause]}]})
    async with MockLLMServer(slow) as server, stdio_client(home) as client:
        url = server.url
        sid = await new_session(client, home, provider="oai", model="mock-model", baseUrl=url)
        stream, prompt = await start_run(client, sid, "/think", until="message_update")
        during = await client.call("session/state", {"sessionId": sid})
        info = await client.call("session/load", {"sessionId": sid})  # loaded: its info
        await prompt
        stream.close()
        after = await client.call("session/state", {"sessionId": sid})
    assert (during["status"], during["model"]) == ("running", "big-model")
    assert info["session"]["model"] == "mock-model"  # the session's model: not swapped
    assert (after["status"], after["model"]) == ("idle", "mock-model")


async def test_mcp_servers_given_to_a_loaded_session_go_through_creation(home: Home) -> None:
    """``session/load`` with ``mcpServers`` of a session loaded in this daemon without any:
    it is built again with them (the path that creates a session), and its next run has the
    tools; its subscribers stay subscribed."""
    import sys

    from tests.mcp.conftest import SCENARIOS, SERVER

    home.use_scenarios(SCENARIOS)
    server = {"name": "t", "command": sys.executable, "args": [str(SERVER)], "env": []}
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        loaded = await client.call("session/load", {"sessionId": sid, "mcpServers": [server]})
        assert loaded["session"]["sessionId"] == sid
        _, events = await run(client, sid, "mcp-add")
    ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    assert [(end["name"], end["result"][0]["text"]) for end in ends] == [("mcp__t__add", "5")]
