"""Runs through the real daemon and the real mock LLM over HTTP (OpenAI provider code)."""

from __future__ import annotations

import asyncio

import pytest

from agentd.errors import RpcError
from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import RequestPermissionParams
from agentd.protocol.trust_list import add_trusted
from tests.harness import (
    Home,
    drain,
    kinds,
    new_session,
    run,
    scaled,
    start_run,
    stdio_client,
    wait_for_file,
)

pytestmark = pytest.mark.e2e


async def test_hello_world_writes_and_runs_a_file(home: Home) -> None:
    """The full tool-using turn streams in order and the file really exists afterwards."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "hello world")
    assert result["stopReason"] == "end_turn"
    assert result["turns"] == 3
    assert (home.project / "hello.py").read_text().startswith("print(")
    types = kinds(events)
    assert types[0] == "agent_start"
    assert types[-1] == "agent_end"
    assert types.count("agent_end") == 1
    assert [e["seq"] for e in events] == list(range(events[0]["seq"], events[-1]["seq"] + 1))
    assert types.count("tool_execution_start") == types.count("tool_execution_end") == 2
    bash_out = [
        e["event"]["output"] for e in events if e["event"]["type"] == "tool_execution_update"
    ]
    assert "Hello, World!" in "".join(bash_out)
    deltas = [e["event"]["delta"] for e in events if e["event"]["type"] == "message_update"]
    assert {d["type"] for d in deltas} >= {"text_delta", "toolcall_start", "toolcall_delta"}
    assert all("message" not in d for d in deltas)


async def test_twenty_tool_turns(home: Home) -> None:
    """A long tool loop runs every bash call and ends normally."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "run twenty commands")
    assert result["stopReason"] == "end_turn"
    assert kinds(events).count("tool_execution_end") == 20


async def test_max_turns_stops_a_looping_model(home: Home) -> None:
    """maxTurns bounds a model that never stops calling tools."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home, maxTurns=3)
        result, events = await run(client, sid, "loop forever")
    assert result["stopReason"] == "max_turns"
    assert result["turns"] == 3
    assert events[-1]["event"]["stopReason"] == "max_turns"


async def test_rate_limit_is_retried_then_succeeds(home: Home) -> None:
    """HTTP 429 is announced as a retry event and the run then succeeds."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "rate limited")
    assert result["stopReason"] == "end_turn"
    retries = [e["event"] for e in events if e["event"]["type"] == "retry"]
    assert retries
    assert "429" in retries[0]["error"]


async def test_server_error_forever_ends_with_error(home: Home) -> None:
    """A provider that keeps failing ends the run with stop reason error and the message."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "server error")
        state = await client.call("session/state", {"sessionId": sid})
    assert result["stopReason"] == "error"
    assert "500" in result["error"]
    assert kinds(events).count("retry") == 2
    assert events[-1]["event"]["type"] == "agent_end"
    assert events[-2]["event"] == {
        "type": "error",
        "message": result["error"],
        "code": "provider_error",
    }
    assert state["status"] == "idle"


async def test_truncated_stream_is_an_error(home: Home) -> None:
    """A stream cut before its finish reason ends the run with an error, not a hang."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, _ = await run(client, sid, "truncated stream")
    assert result["stopReason"] == "error"
    assert "stream ended unexpectedly" in result["error"]


@pytest.mark.parametrize(
    ("prompt", "needle"),
    [
        ("bad tool json", "not a valid JSON object"),
        ("unknown tool", "Unknown tool"),
    ],
)
async def test_bad_tool_calls_become_error_results(home: Home, prompt: str, needle: str) -> None:
    """Malformed arguments and unknown tools give error results; the loop continues."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, prompt)
    assert result["stopReason"] == "end_turn"
    ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    assert ends[0]["isError"]
    assert needle in ends[0]["result"][0]["text"]


async def test_prompting_a_busy_session_is_refused(home: Home) -> None:
    """A second prompt while running is -32002; steer is the way to talk to a busy run."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, first = await start_run(client, sid, "be slow", until="agent_start")
        with pytest.raises(RpcError) as busy:
            await client.call("session/prompt", {"sessionId": sid, "text": "again"})
        assert busy.value.code == -32002
        await client.call("session/cancel", {"sessionId": sid})
        assert (await first)["stopReason"] == "cancelled"


async def test_cancel_mid_stream(home: Home) -> None:
    """session/cancel during streaming resolves the prompt with cancelled and one agent_end."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        stream, prompt = await start_run(client, sid, "be slow", until="message_update")
        cancel = await client.call("session/cancel", {"sessionId": sid})
        result = await asyncio.wait_for(prompt, scaled(5))
        rest = await drain(stream, until="agent_end")
    assert cancel["cancelled"] is True
    assert result["stopReason"] == "cancelled"
    assert rest[-1]["event"]["stopReason"] == "cancelled"


async def test_cancel_mid_tool_kills_bash_and_records_a_result(home: Home) -> None:
    """Cancelling a running bash call stops it promptly and leaves a matching tool result."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        mark = home.project / "bash-started"
        _, prompt = await start_run(
            client, sid, "nap in bash after a mark", until="tool_execution_start"
        )
        await wait_for_file(mark)  # bash runs the command now
        await client.call("session/cancel", {"sessionId": sid})
        result = await asyncio.wait_for(prompt, scaled(5))
        messages = (await client.call("session/messages", {"sessionId": sid}))["messages"]
    assert result["stopReason"] == "cancelled"
    assert messages[-1]["role"] == "tool_result"
    assert messages[-1]["isError"] is True


async def test_steer_is_delivered_before_the_next_llm_call(home: Home) -> None:
    """A steering message sent mid-run becomes the next user message of the run."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        stream, prompt = await start_run(client, sid, "take a moment", until="message_update")
        await client.call("session/steer", {"sessionId": sid, "text": "how are you"})
        result = await asyncio.wait_for(prompt, scaled(20))
        events = await drain(stream, until="agent_end")
    assert result["turns"] == 2
    queue = [e["event"] for e in events if e["event"]["type"] == "queue_update"]
    assert queue[0]["steering"] == ["how are you"]
    assert queue[-1].get("steering", []) == []
    users = [
        e["event"]["message"]
        for e in events
        if e["event"]["type"] == "message_end" and e["event"]["message"]["role"] == "user"
    ]
    assert users[-1]["content"][0]["text"] == "how are you"


async def test_follow_up_runs_after_the_agent_would_stop(home: Home) -> None:
    """A follow-up is answered in a further turn of the same run."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        stream, prompt = await start_run(client, sid, "take a moment", until="message_update")
        await client.call("session/followUp", {"sessionId": sid, "text": "how are you"})
        result = await asyncio.wait_for(prompt, scaled(20))
        stream.close()
        messages = (await client.call("session/messages", {"sessionId": sid}))["messages"]
    assert result["stopReason"] == "end_turn"
    assert result["turns"] == 2
    assert messages[-1]["content"][0]["text"].startswith("I'm doing well")


async def test_steer_on_an_idle_session_is_refused(home: Home) -> None:
    """Queue methods need a running session; the error says to use session/prompt."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        with pytest.raises(RpcError) as idle:
            await client.call("session/steer", {"sessionId": sid, "text": "x"})
    assert idle.value.code == -32009
    assert "session/prompt" in idle.value.message


async def test_bad_session_params_are_precise(home: Home) -> None:
    """Unknown providers, tools and cwd give clear errors and the daemon stays usable."""
    async with stdio_client(home) as client:
        with pytest.raises(RpcError) as bad_cwd:
            await client.call("session/new", {"cwd": "relative/path", "provider": "mock"})
        with pytest.raises(RpcError) as bad_tool:
            await new_session(client, home, tools=["read", "teleport"])
        with pytest.raises(RpcError) as bad_provider:
            await new_session(client, home, provider="nonesuch")
        with pytest.raises(RpcError) as missing:
            await client.call("session/prompt", {"sessionId": "nope", "text": "hi"})
        sid = await new_session(client, home)
        result, _ = await run(client, sid, "how are you")
    assert bad_cwd.value.code == -32602
    assert bad_tool.value.code == -32602
    assert "teleport" in bad_tool.value.message
    assert bad_provider.value.code == -32005
    assert missing.value.code == -32003
    assert result["stopReason"] == "end_turn"


async def test_models_list_and_set_model(home: Home) -> None:
    """models/list answers; setModel switches the session, keeping the configured retries."""
    async with stdio_client(home) as client:
        models = await client.call("models/list")
        sid = await new_session(client, home)
        info = await client.call("session/setModel", {"sessionId": sid, "model": "mock-large"})
        state = await client.call("session/state", {"sessionId": sid})
        result, events = await run(client, sid, "server error")
    assert ("mock", "mock-model") in {(m["provider"], m["model"]) for m in models["models"]}
    assert info["model"] == "mock-large"
    assert state["model"] == "mock-large"
    assert result["stopReason"] == "error"
    assert [e["event"]["maxAttempts"] for e in events if e["event"]["type"] == "retry"] == [3, 3]


async def test_models_list_reads_the_configuration_of_a_cwd(home: Home) -> None:
    """models/list {cwd} includes that project's providers; an invalid cwd is -32602."""
    other = home.root / "other"
    other.mkdir()
    (other / ".agentd.toml").write_text(
        '[providers.elsewhere]\nbase_url = "http://127.0.0.1:9/v1"\nmodels = ["m-x"]\n'
    )
    add_trusted(other, home.env)  # trust is pinned to the file's content: write it first
    async with stdio_client(home) as client:
        here = await client.call("models/list", {})
        there = await client.call("models/list", {"cwd": str(other)})
        with pytest.raises(RpcError) as bad:
            await client.call("models/list", {"cwd": "relative"})
    assert ("elsewhere", "m-x") not in {(m["provider"], m["model"]) for m in here["models"]}
    assert ("elsewhere", "m-x") in {(m["provider"], m["model"]) for m in there["models"]}
    assert bad.value.code == -32602


async def test_session_state_reports_the_usage_of_every_run(home: Home) -> None:
    """session/state's usage is the session's total: the sum of its runs' usage."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        first, _ = await run(client, sid, "how are you")
        second, _ = await run(client, sid, "hello world")
        state = await client.call("session/state", {"sessionId": sid})
    usage = state["usage"]
    for name in ("inputTokens", "outputTokens"):
        assert usage[name] == first["usage"][name] + second["usage"][name] > 0
    assert usage.get("cost", 0.0) == pytest.approx(first["cost"] + second["cost"])
    assert (state["status"], state["messageCount"]) == ("idle", 2 + 6)


async def test_cancel_reports_the_dropped_queue(home: Home) -> None:
    """Messages queued when the run is cancelled are dropped and returned by session/cancel."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        stream, prompt = await start_run(client, sid, "take a moment", until="message_update")
        await client.call("session/steer", {"sessionId": sid, "text": "now this"})
        await client.call("session/followUp", {"sessionId": sid, "text": "and then that"})
        cancel = await client.call("session/cancel", {"sessionId": sid})
        result = await asyncio.wait_for(prompt, scaled(5))
        events = await drain(stream, until="agent_end")
    assert result["stopReason"] == "cancelled"
    assert cancel == {"cancelled": True, "dropped": ["now this", "and then that"]}
    queues = [e["event"] for e in events if e["event"]["type"] == "queue_update"]
    assert queues[-1].get("steering", []) == queues[-1].get("followUp", []) == []


async def test_cancel_during_approval_pairs_every_tool_event(home: Home) -> None:
    """Cancelled behind an approval: each call's end follows its start; the request resolves."""

    async def never(params: RequestPermissionParams) -> PermissionOption:
        await asyncio.sleep(30)
        return "allow_once"

    async with stdio_client(home, never) as client:
        sid = await new_session(client, home, permissionMode="ask")
        stream = client.raw_events(sid)
        prompt = asyncio.create_task(
            client.call("session/prompt", {"sessionId": sid, "text": "write two notes"})
        )
        seen = await drain(stream, until="permission_request")
        await client.call("session/cancel", {"sessionId": sid})
        result = await asyncio.wait_for(prompt, scaled(5))
        seen += await drain(stream, until="agent_end")
    assert result["stopReason"] == "cancelled"
    tool_events = [
        (e["event"]["type"], e["event"]["toolCallId"])
        for e in seen
        if e["event"]["type"] in ("tool_execution_start", "tool_execution_end")
    ]
    for call_id in ("call_a", "call_b"):
        per_call = [kind for kind, c in tool_events if c == call_id]
        assert per_call == ["tool_execution_start", "tool_execution_end"]
    resolved = [e["event"] for e in seen if e["event"]["type"] == "permission_resolved"]
    assert [r["reason"] for r in resolved] == ["the run was cancelled"]
    assert not (home.project / "a.txt").exists()
