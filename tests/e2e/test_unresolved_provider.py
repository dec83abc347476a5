"""Reading a session never needs its provider: a session whose provider the daemon cannot
build (not configured, no key) is listed, loaded, exported, forked and deleted; prompting it is
a configuration error until ``session/setModel`` points it at a provider that works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentd.errors import RpcError
from tests.harness import Home, new_session, run, stdio_client

pytestmark = pytest.mark.e2e


def retarget(path: Path, provider: str) -> None:
    """Point the session file's model entries and replies at ``provider`` (as if the file came
    from a machine where that provider was configured)."""
    lines = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("type") == "model_change":
            entry["provider"] = provider
        elif entry.get("type") == "message" and entry["message"]["role"] == "assistant":
            entry["message"]["provider"] = provider
        lines.append(json.dumps(entry))
    path.write_text("\n".join(lines) + "\n")


async def test_a_session_whose_provider_is_unknown_stays_readable(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "how are you")
        await client.call("session/close", {"sessionId": sid})
        (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
        retarget(path, "ghost")

        listed = await client.call("session/list", {})
        assert sid in [s["sessionId"] for s in listed["sessions"]]
        loaded = await client.call("session/load", {"sessionId": sid})
        assert loaded["session"]["provider"] == "ghost"
        assert loaded["messageCount"] == 2
        messages = await client.call("session/messages", {"sessionId": sid})
        assert len(messages["messages"]) == 2
        markdown = await client.call("session/export", {"sessionId": sid})
        assert "how are you" in markdown["content"]
        html = await client.call("session/export", {"sessionId": sid, "format": "html"})
        assert "<html" in html["content"].lower()
        fork = await client.call("session/fork", {"sessionId": sid})
        assert fork["provider"] == "ghost"

        with pytest.raises(RpcError) as refused:
            await client.call("session/prompt", {"sessionId": sid, "text": "how are you"})
        assert refused.value.code == -32005
        assert "ghost" in refused.value.message
        with pytest.raises(RpcError) as refused_compact:
            await client.call("session/compact", {"sessionId": sid})
        assert refused_compact.value.code == -32005
        state = await client.call("session/state", {"sessionId": sid})
        assert state["status"] == "idle"
        assert state["messageCount"] == 2

        info = await client.call(
            "session/setModel", {"sessionId": sid, "provider": "mock", "model": "mock-model"}
        )
        assert info["provider"] == "mock"
        result, _ = await run(client, sid, "how are you")
        assert result["stopReason"] == "end_turn"
        assert len((await client.call("session/messages", {"sessionId": sid}))["messages"]) == 4

        await client.call("session/delete", {"sessionId": fork["sessionId"]})
        assert not list(home.sessions.glob(f"*/*_{fork['sessionId']}.jsonl"))


async def test_a_session_without_its_key_is_exported_and_refused_a_prompt(home: Home) -> None:
    """Provider openai, no key where the daemon runs: reads work, a prompt says what to set."""
    for name in [n for n in home.env if n.startswith(("OPENAI_", "LLM_", "ANTHROPIC_"))]:
        del home.env[name]
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "how are you")
        await client.call("session/close", {"sessionId": sid})
        (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
        retarget(path, "openai")
        html = await client.call("session/export", {"sessionId": sid, "format": "html"})
        assert "how are you" in html["content"]
        with pytest.raises(RpcError) as refused:
            await client.call("session/prompt", {"sessionId": sid, "text": "how are you"})
        assert refused.value.code == -32005
        assert "OPENAI_API_KEY" in refused.value.message


async def test_a_session_whose_project_directory_is_gone_is_still_readable(home: Home) -> None:
    """A session file from another machine (its cwd does not exist here)."""
    project = home.root / "elsewhere"
    project.mkdir()
    async with stdio_client(home) as client:
        sid = await new_session(client, home, cwd=str(project))
        await run(client, sid, "how are you")
        await client.call("session/close", {"sessionId": sid})
        project.rmdir()
        listed = await client.call("session/list", {})
        assert sid in [s["sessionId"] for s in listed["sessions"]]
        markdown = await client.call("session/export", {"sessionId": sid})
        assert "how are you" in markdown["content"]
        with pytest.raises(RpcError) as refused:
            await client.call("session/prompt", {"sessionId": sid, "text": "how are you"})
        assert refused.value.code == -32005
        assert "does not exist" in refused.value.message
