"""Custom commands through a real daemon (``agentd --stdio``) and the real HTTP provider
against a mock LLM in this process, whose requests are read back."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.errors import ConfigError, InvalidParams
from agentd.mockllm import MockLLMServer
from tests.harness import Home, new_session, run, scaled, stdio_client

pytestmark = pytest.mark.e2e

PROVIDER = """
[providers.oai]
api = "openai"
base_url = "{url}"
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
        home.project_config(tables=PROVIDER.format(url=server.url))
        home.env["OAI_TEST_KEY"] = "oai-test-key-123"
        yield server


def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text)


def user_commands(home: Home) -> Path:
    return home.config_dir / "agentd" / "commands"


def last_user_text(llm: MockLLMServer) -> str:
    user = [m for m in llm.requests[-1]["messages"] if m["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


async def test_commands_from_both_places_are_listed_and_expanded(
    home: Home, llm: MockLLMServer
) -> None:
    write(user_commands(home), "review", "---\ndescription: user review\n---\nUser: $1")
    write(user_commands(home), "standup", "Summarise yesterday's commits.")
    write(user_commands(home), "bad name", "x")
    project = home.project / ".agentd" / "commands"
    write(
        project,
        "review",
        "---\ndescription: Review a file\nargument-hint: FILE [FOCUS]\n---\n"
        "Review $1, focusing on $2. (asked: $ARGUMENTS)",
    )
    home.trust()  # the project's commands are pinned with the folder
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="oai")
        listed = await client.call("session/commands", {"sessionId": sid})
        assert listed["commands"] == [
            {"name": "review", "description": "Review a file", "argumentHint": "FILE [FOCUS]",
             "source": "project"},
            {"name": "standup", "description": "Summarise yesterday's commits.",
             "argumentHint": None, "source": "user"},
        ]  # fmt: skip
        assert any("bad name.md" in w for w in listed["warnings"])

        result, events = await run(client, sid, '/review src/a.py "race conditions"')
        assert result["stopReason"] == "end_turn"
        expansion = (
            'Review src/a.py, focusing on race conditions. (asked: src/a.py "race conditions")'
        )
        assert last_user_text(llm) == expansion
        (user,) = [
            e["event"]["message"]
            for e in events
            if e["event"]["type"] == "message_end" and e["event"]["message"]["role"] == "user"
        ]
        assert user["command"] == '/review src/a.py "race conditions"'
        assert user["content"] == [{"type": "text", "text": expansion}]

        await run(client, sid, "/standup")
        assert last_user_text(llm) == "Summarise yesterday's commits."
        page = await client.call("session/messages", {"sessionId": sid})
        commands = [m.get("command") for m in page["messages"] if m["role"] == "user"]
        assert commands == ['/review src/a.py "race conditions"', "/standup"]

    stored = next(home.sessions.rglob(f"*{sid}.jsonl")).read_text()
    assert '"command":"/standup"' in stored  # the session file keeps both


async def test_an_unknown_command_is_an_error_listing_the_known_ones(
    home: Home, llm: MockLLMServer
) -> None:
    write(user_commands(home), "standup", "Summarise.")
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="oai")
        with pytest.raises(InvalidParams) as caught:
            await client.call("session/prompt", {"sessionId": sid, "text": "/stnadup now"})
        assert "unknown command /stnadup" in caught.value.message
        assert "/standup" in caught.value.message
        assert caught.value.data == {"command": "stnadup", "commands": ["standup"]}
        page = await client.call("session/messages", {"sessionId": sid})
        assert page["messages"] == []  # nothing recorded, no model call
        assert llm.requests == type(llm.requests)()

        await run(client, sid, " /stnadup is a typo")  # a leading space: a plain prompt
        assert last_user_text(llm) == " /stnadup is a typo"
        await run(client, sid, "/etc/hosts is empty")  # a path, not a command
        assert last_user_text(llm) == "/etc/hosts is empty"


async def test_an_untrusted_project_commands_are_not_loaded(home: Home) -> None:
    other = home.root / "untrusted"
    (other / ".git").mkdir(parents=True)
    write(other / ".agentd" / "commands", "deploy", "Deploy everything now.")
    write(user_commands(home), "standup", "Summarise.")
    async with stdio_client(home) as client:
        stream = client.raw_events(None)
        info = await client.call("session/new", {"cwd": str(other), "provider": "mock"})
        warning = next(w for w in info["warnings"] if "custom commands" in w)
        assert "not trusted" in warning
        assert f"agentctl trust {other}" in warning
        listed = await client.call("session/commands", {"sessionId": info["sessionId"]})
        assert [c["name"] for c in listed["commands"]] == ["standup"]
        with pytest.raises(InvalidParams, match="unknown command /deploy"):
            await client.call("session/prompt", {"sessionId": info["sessionId"], "text": "/deploy"})
        async with asyncio.timeout(scaled(30)):  # the warning is a session_warning event too
            async for frame in stream:
                event = frame["event"]
                if event["type"] == "session_warning" and "custom commands" in event["message"]:
                    break
        stream.close()


async def test_a_command_model_applies_to_its_run_only(home: Home, llm: MockLLMServer) -> None:
    write(user_commands(home), "deep", "---\nmodel: oai/big-model\n---\nThink hard about $1.")
    write(user_commands(home), "bad", "---\nmodel: nowhere/none\n---\nBody")
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="oai", model="mock-model")
        _, events = await run(client, sid, "/deep caching")
        assert llm.requests[-1]["model"] == "big-model"
        replies = [
            e["event"]["message"]
            for e in events
            if e["event"]["type"] == "message_end" and e["event"]["message"]["role"] == "assistant"
        ]
        assert replies[-1]["model"] == "big-model"
        state = await client.call("session/state", {"sessionId": sid})
        assert (state["provider"], state["model"]) == ("oai", "mock-model")
        await run(client, sid, "plain question")
        assert llm.requests[-1]["model"] == "mock-model"
        with pytest.raises(ConfigError, match="nowhere"):  # a provider the config lacks
            await client.call("session/prompt", {"sessionId": sid, "text": "/bad"})
        state = await client.call("session/state", {"sessionId": sid})
        assert (state["model"], state["status"]) == ("mock-model", "idle")


async def test_edited_files_count_from_the_next_call(home: Home) -> None:
    folder = user_commands(home)
    write(folder, "one", "First")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        listed = await client.call("session/commands", {"sessionId": sid})
        assert [c["name"] for c in listed["commands"]] == ["one"]
        write(folder, "two", "---\ndescription: second\n---\nSecond")
        (folder / "one.md").unlink()
        write(folder, "three", "---\ndescripton: typo\n---\nThird")
        listed = await client.call("session/commands", {"sessionId": sid})
        assert [c["name"] for c in listed["commands"]] == ["two"]
        assert any("descripton" in w for w in listed["warnings"])
    assert os.path.isdir(folder)


async def test_a_chat_not_started_yet_lists_by_cwd(home: Home) -> None:
    write(home.project / ".agentd" / "commands", "review", "Review $1.")
    home.trust()  # the project's commands are pinned with the folder
    async with stdio_client(home) as client:
        listed = await client.call("session/commands", {"cwd": str(home.project)})
        assert [(c["name"], c["source"]) for c in listed["commands"]] == [("review", "project")]
        for bad in ({}, {"cwd": "relative"}, {"cwd": str(home.project), "sessionId": "x"}):
            with pytest.raises(InvalidParams):
                await client.call("session/commands", bad)
        assert home.sessions.exists() is False or not list(home.sessions.rglob("*.jsonl"))


async def test_exports_and_the_shell_show_what_was_typed(home: Home, llm: MockLLMServer) -> None:
    write(user_commands(home), "review", "Review $1 with care.")
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="oai")
        await run(client, sid, "/review a.py")
        markdown = await client.call("session/export", {"sessionId": sid})
        html = await client.call("session/export", {"sessionId": sid, "format": "html"})
    assert (
        "```\n/review a.py\n```\n\nExpanded prompt:\n\n> Review a.py with care."
        in (markdown["content"])
    )
    assert '<pre class="output">/review a.py</pre>' in html["content"]
    shown = subprocess.run(
        [sys.executable, "-m", "agentctl", "sessions", "show", sid],
        env={**home.env, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    assert "› /review a.py" in shown.stdout, shown.stderr
