"""The ``task`` tool through the real daemon and the mock LLM: a child session is created,
linked to its parent, streamed to the parent's subscribers, listed under it, resumable and
exportable, and its final text is the task's result."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentctl.client import AgentClient
from tests.harness import Home, new_session, scaled, stdio_client

pytestmark = pytest.mark.e2e


async def prompt_and_collect(
    client: AgentClient, sid: str, text: str, **extra: Any
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Prompt ``sid`` and collect every session/event the client gets (the children's too)
    until the parent's agent_end."""
    stream = client.raw_events()
    try:
        result = await asyncio.wait_for(
            client.call("session/prompt", {"sessionId": sid, "text": text, **extra}), scaled(30)
        )
        events: list[dict[str, Any]] = []

        async def collect() -> None:
            async for params in stream:
                events.append(params)
                if params["sessionId"] == sid and params["event"]["type"] == "agent_end":
                    return

        await asyncio.wait_for(collect(), scaled(10))
    finally:
        stream.close()
    return result, events


def of_session(events: list[dict[str, Any]], sid: str) -> list[dict[str, Any]]:
    return [e["event"] for e in events if e["sessionId"] == sid]


def child_ids(events: list[dict[str, Any]]) -> list[str]:
    return [e["event"]["childSessionId"] for e in events if e["event"]["type"] == "subagent_start"]


def header(home: Home, sid: str) -> dict[str, Any]:
    (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
    return dict(json.loads(path.read_text().splitlines()[0]))


async def test_a_task_runs_a_linked_child_session_and_returns_its_text(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await prompt_and_collect(client, sid, "delegate the answer")
        (child,) = child_ids(events)
        listed = await client.call("session/list", {"cwd": str(home.project)})
        loaded = await client.call("session/load", {"sessionId": child})
    assert result["stopReason"] == "end_turn"
    parent_events = of_session(events, sid)
    types = [e["type"] for e in parent_events]
    assert types.index("tool_execution_start") < types.index("subagent_start")
    start = next(e for e in parent_events if e["type"] == "subagent_start")
    assert start == {
        "type": "subagent_start",
        "toolCallId": "task_1",
        "childSessionId": child,
        "agent": "general",
        "description": "Find the answer",
    }
    # the child's own events reached the parent's subscriber under the child's id
    child_events = of_session(events, child)
    assert next(e["type"] for e in child_events) == "agent_start"
    assert child_events[-1]["type"] == "agent_end"
    assert child_events[-1]["stopReason"] == "end_turn"
    end = next(e for e in parent_events if e["type"] == "tool_execution_end")
    assert end["result"] == [{"type": "text", "text": "The answer is 42."}]
    details = end["details"]
    assert details["childSessionId"] == child
    assert details["agent"] == "general"
    assert details["usage"] == child_events[-1]["usage"]
    assert details["cost"] == child_events[-1]["cost"]
    # the parent's run usage includes the child's
    own = [
        e["message"]["usage"]
        for e in parent_events
        if e["type"] == "message_end" and e["message"]["role"] == "assistant"
    ]
    assert (
        result["usage"]["inputTokens"]
        == sum(u["inputTokens"] for u in own) + (details["usage"]["inputTokens"])
    )
    # linked: header, SessionInfo, session/list
    assert header(home, child)["parentSessionId"] == sid
    assert header(home, child)["parentToolCallId"] == "task_1"
    assert "parentSessionId" not in header(home, sid)
    assert loaded["session"]["parentSessionId"] == sid
    assert loaded["session"]["parentToolCallId"] == "task_1"
    by_id = {s["sessionId"]: s for s in listed["sessions"]}
    assert by_id[child]["parentSessionId"] == sid
    assert by_id[child]["parentToolCallId"] == "task_1"
    assert by_id[child]["title"] == "Find the answer"
    assert "parentSessionId" not in by_id[sid]


async def test_two_tasks_of_one_reply_run_in_parallel(home: Home) -> None:
    """Both children start before either ends (no timing assumptions)."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await prompt_and_collect(client, sid, "delegate two slow tasks")
    assert result["stopReason"] == "end_turn"
    children = child_ids(events)
    assert len(children) == 2
    order = [
        (e["sessionId"], e["event"]["type"])
        for e in events
        if e["sessionId"] in children and e["event"]["type"] in ("agent_start", "agent_end")
    ]
    starts = [i for i, (_, kind) in enumerate(order) if kind == "agent_start"]
    ends = [i for i, (_, kind) in enumerate(order) if kind == "agent_end"]
    assert max(starts) < min(ends), order
    texts = [
        e["event"]["result"][0]["text"]
        for e in events
        if e["sessionId"] == sid and e["event"]["type"] == "tool_execution_end"
    ]
    assert texts == ["Slow one done.", "Slow two done."]


async def test_cancelling_the_parent_cancels_its_child(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        stream = client.raw_events()
        prompt = asyncio.create_task(
            client.call("session/prompt", {"sessionId": sid, "text": "delegate a sleeper"})
        )
        events: list[dict[str, Any]] = []

        async def until_child_runs_bash() -> None:
            async for params in stream:
                events.append(params)
                event = params["event"]
                if event["type"] == "tool_execution_start" and event["name"] == "bash":
                    return

        await asyncio.wait_for(until_child_runs_bash(), scaled(20))
        (child,) = child_ids(events)
        await client.call("session/cancel", {"sessionId": sid})
        result = await asyncio.wait_for(prompt, scaled(20))
        state = await client.call("session/state", {"sessionId": child})
        stream.close()
    assert result["stopReason"] == "cancelled"
    assert state["status"] == "idle"
    assert state["usage"]["inputTokens"] > 0


async def test_the_parents_token_budget_covers_its_child(home: Home) -> None:
    """A child that would loop forever stops when the parent's run budget is spent."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await prompt_and_collect(
            client, sid, "delegate a spender", maxTokens=16000
        )
    (child,) = child_ids(events)
    child_end = of_session(events, child)[-1]
    assert child_end["type"] == "agent_end"
    assert child_end["stopReason"] == "budget"
    assert "parent's budget" in child_end["error"]
    end = next(e for e in of_session(events, sid) if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert result["usage"]["inputTokens"] >= child_end["usage"]["inputTokens"]


async def test_the_parents_max_turns_covers_its_child(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await prompt_and_collect(client, sid, "delegate a spender", maxTurns=3)
    (child,) = child_ids(events)
    child_end = of_session(events, child)[-1]
    assert child_end["stopReason"] == "max_turns"
    assert child_end["turns"] == 3


async def test_a_childs_approval_is_answered_by_the_parents_client(home: Home) -> None:
    asked: list[dict[str, Any]] = []

    async def approve(params: Any) -> str:
        asked.append({"sessionId": params.session_id, "tool": params.tool})
        return "allow_once"

    async with stdio_client(home, permission_handler=approve) as client:
        sid = await new_session(client, home, permissionMode="ask")
        result, events = await prompt_and_collect(client, sid, "delegate a write")
    (child,) = child_ids(events)
    assert asked == [{"sessionId": child, "tool": "write"}]
    assert (home.project / "child.txt").read_text() == "hi\n"
    assert result["stopReason"] == "end_turn"
    kinds = [e["type"] for e in of_session(events, child)]
    assert "permission_request" in kinds
    assert "permission_resolved" in kinds


async def test_a_child_refused_approval_without_a_client_that_answers(home: Home) -> None:
    """Ask mode with no approving client: the child's write is refused, nothing is written."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home, permissionMode="ask")
        _, events = await prompt_and_collect(client, sid, "delegate a write")
    assert not (home.project / "child.txt").exists()
    (child,) = child_ids(events)
    refused = [e for e in of_session(events, child) if e["type"] == "permission_resolved"]
    assert refused
    assert refused[0]["outcome"] == "reject_once"


async def test_the_explore_profile_cannot_write(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await prompt_and_collect(client, sid, "delegate an explorer write")
    (child,) = child_ids(events)
    end = next(e for e in of_session(events, child) if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert "Unknown tool 'write'" in end["result"][0]["text"]
    assert not (home.project / "child.txt").exists()


async def test_an_unknown_profile_is_a_clear_error_result(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await prompt_and_collect(client, sid, "delegate to nobody")
    assert result["stopReason"] == "end_turn"
    assert child_ids(events) == []
    end = next(e for e in of_session(events, sid) if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert "Unknown agent profile 'nobody'" in end["result"][0]["text"]
    assert "general" in end["result"][0]["text"]


async def test_a_child_session_resumes_and_exports_like_any_session(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await prompt_and_collect(client, sid, "delegate the answer")
    (child,) = child_ids(events)
    async with stdio_client(home) as client:  # a new daemon: the child is loaded from disk
        loaded = await client.call("session/load", {"sessionId": child})
        result, _ = await prompt_and_collect(client, child, "how are you")
        markdown = await client.call("session/export", {"sessionId": child, "format": "markdown"})
    assert loaded["session"]["parentSessionId"] == sid
    assert result["stopReason"] == "end_turn"
    text = markdown if isinstance(markdown, str) else json.dumps(markdown)
    assert "child alpha: find the answer" in text
    assert "The answer is 42." in text


async def test_depth_is_limited_to_two(home: Home) -> None:
    """A profile listing ``task`` lets its child start subagents; the grandchild (depth 2)
    never gets the task tool."""
    agents = home.config_dir / "agentd" / "agents"
    agents.mkdir(parents=True)
    (agents / "nester.md").write_text(
        "---\nname: nester\ndescription: Starts subagents.\ntools: [read, task]\n---\nNest.\n"
    )
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await prompt_and_collect(client, sid, "delegate a nesting task")
    assert result["stopReason"] == "end_turn"
    child, grandchild = child_ids(events)
    ends = {
        e["sessionId"]: e["event"]
        for e in events
        if e["event"]["type"] == "tool_execution_end" and e["event"]["name"] == "task"
    }
    assert ends[child]["details"]["childSessionId"] == grandchild
    assert "Unknown tool 'task'" in ends[grandchild]["result"][0]["text"]


async def test_a_profile_whose_model_cannot_be_used_is_a_clear_error_result(home: Home) -> None:
    agents = home.config_dir / "agentd" / "agents"
    agents.mkdir(parents=True)
    (agents / "broken.md").write_text(
        "---\nname: broken\ndescription: Uses a provider nobody set up.\nmodel: nosuch/x\n---\n"
    )
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await prompt_and_collect(client, sid, "delegate to a broken profile")
    assert result["stopReason"] == "end_turn"
    assert child_ids(events) == []
    end = next(e for e in of_session(events, sid) if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert end["result"][0]["text"].startswith("The subagent could not start: ")
    assert "nosuch" in end["result"][0]["text"]


async def test_a_client_subscribing_mid_task_also_watches_the_running_child(home: Home) -> None:
    """Subscribing to the parent while its child runs subscribes to the child too."""
    from tests.harness import socket_client, stop

    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as first, socket_client(home) as second:
            sid = await new_session(first, home)
            stream = first.raw_events()
            prompt = asyncio.create_task(
                first.call("session/prompt", {"sessionId": sid, "text": "delegate a sleeper"})
            )
            seen: list[dict[str, Any]] = []

            async def until_bash() -> None:
                async for params in stream:
                    seen.append(params)
                    event = params["event"]
                    if event["type"] == "tool_execution_start" and event["name"] == "bash":
                        return

            await asyncio.wait_for(until_bash(), scaled(20))
            (child,) = child_ids(seen)
            late = second.raw_events(child)
            await second.call("session/subscribe", {"sessionId": sid})
            await first.call("session/cancel", {"sessionId": sid})
            ends = []

            async def child_end() -> None:
                async for params in late:
                    if params["event"]["type"] == "agent_end":
                        ends.append(params["event"])
                        return

            await asyncio.wait_for(child_end(), scaled(20))
            await asyncio.wait_for(prompt, scaled(20))
            stream.close()
            late.close()
    finally:
        stop(daemon)
    assert ends[0]["stopReason"] == "cancelled"
