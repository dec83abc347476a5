"""Limits of parallel subagents through the real daemon and the mock LLM: the parent run's
budget covers children that call the model at the same time, a session runs at most
``subagents.max_parallel`` of them at once (the rest wait), a run starts at most
``subagents.max_per_run``, and a child never gets a tool its parent lacks."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import Home, new_session, stdio_client
from tests.subagents.test_task_e2e import child_ids, of_session, prompt_and_collect

pytestmark = pytest.mark.e2e

PRICED = '[prices."mock-model"]\ninput = 1000.0\noutput = 1000.0\n'
"""$0.001 a token: a cost cap of $20 is about 20,000 tokens."""


def all_tokens(usage: dict[str, Any]) -> int:
    keys = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")
    return sum(int(usage.get(key, 0)) for key in keys)


def most_at_once(events: list[dict[str, Any]], children: list[str]) -> int:
    """The largest number of children running at one moment (by their agent_start and
    agent_end events, in the order the client got them)."""
    running = peak = 0
    for params in events:
        kind = params["event"]["type"]
        if params["sessionId"] in children and kind in ("agent_start", "agent_end"):
            running += 1 if kind == "agent_start" else -1
            peak = max(peak, running)
    return peak


def task_ends(events: list[dict[str, Any]], sid: str) -> list[dict[str, Any]]:
    ends = [e for e in of_session(events, sid) if e["type"] == "tool_execution_end"]
    return [e for e in ends if e["name"] == "task"]


@pytest.mark.parametrize(
    ("cap", "spent"),
    [
        ({"maxTokens": 20000}, lambda usage: all_tokens(usage) <= 20000),
        ({"maxCost": 20.0}, lambda usage: usage["cost"] <= 20.0),
    ],
    ids=["tokens", "cost"],
)
async def test_twenty_parallel_children_stay_within_the_parents_cap(
    home: Home, cap: dict[str, Any], spent: Any
) -> None:
    """Twenty children started in one reply, all allowed to run at once: each model call
    holds its estimate in the parent's ledger before it is sent, so together they stop at
    the cap instead of each seeing the same unspent budget."""
    home.user_config(PRICED + "[subagents]\nmax_parallel = 20\n")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await prompt_and_collect(client, sid, "delegate twenty tasks", **cap)
    children = child_ids(events)
    assert len(children) == 20
    assert most_at_once(events, children) > 1  # they did run in parallel
    assert spent(result["usage"]), result["usage"]
    stopped = [of_session(events, c)[-1] for c in children]
    assert any(end["stopReason"] == "budget" for end in stopped)
    assert any(end["stopReason"] == "end_turn" for end in stopped)
    refused = next(end for end in stopped if end["stopReason"] == "budget")
    assert "parent's budget" in refused["error"]


async def test_a_session_runs_at_most_max_parallel_children_at_once(home: Home) -> None:
    home.user_config("[subagents]\nmax_parallel = 3\n")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await prompt_and_collect(client, sid, "delegate twenty tasks")
    children = child_ids(events)
    assert len(children) == 20
    assert most_at_once(events, children) == 3
    assert result["stopReason"] == "end_turn"
    ends = task_ends(events, sid)
    assert [e["result"][0]["text"] for e in ends] == ["Quick."] * 20


async def test_the_default_parallel_limit_queues_the_rest(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await prompt_and_collect(client, sid, "delegate twenty tasks")
    children = child_ids(events)
    assert len(children) == 20
    assert 1 < most_at_once(events, children) <= 4


async def test_a_run_starts_at_most_max_per_run_children(home: Home) -> None:
    home.user_config("[subagents]\nmax_per_run = 5\n")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await prompt_and_collect(client, sid, "delegate twenty tasks")
    assert result["stopReason"] == "end_turn"
    assert len(child_ids(events)) == 5
    ends = task_ends(events, sid)
    refused = [e for e in ends if e.get("isError")]
    assert len(refused) == 15
    assert "already started 5 subagents" in refused[0]["result"][0]["text"]
    assert "subagents.max_per_run" in refused[0]["result"][0]["text"]


async def test_max_per_run_counts_the_childrens_own_subagents(home: Home) -> None:
    """One child that starts three: four subagents in the run, the fourth past a cap of 3."""
    agents = home.config_dir / "agentd" / "agents"
    agents.mkdir(parents=True)
    (agents / "nester.md").write_text(
        "---\nname: nester\ndescription: Starts subagents.\ntools: [read, task]\n---\nNest.\n"
    )
    home.user_config("[subagents]\nmax_per_run = 3\n")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await prompt_and_collect(client, sid, "delegate a fan-out nesting task")
    child, *grandchildren = child_ids(events)
    assert len(grandchildren) == 2
    ends = task_ends(events, child)
    assert sum(1 for e in ends if e.get("isError")) == 1


async def test_a_profile_cannot_grant_a_tool_the_parent_lacks(home: Home) -> None:
    """The parent has read, ls and task; the profile lists write: the child gets read only."""
    agents = home.project / ".agentd" / "agents"
    agents.mkdir(parents=True)
    (agents / "writer.md").write_text(
        "---\nname: writer\ndescription: Writes files.\ntools: write, read\n---\nWrite.\n"
    )
    home.trust()  # trust pins the profiles folder: trust it as planted
    async with stdio_client(home) as client:
        sid = await new_session(client, home, tools=["read", "ls", "task"])
        _, events = await prompt_and_collect(client, sid, "delegate to the writer profile")
    (child,) = child_ids(events)
    end = next(e for e in of_session(events, child) if e["type"] == "tool_execution_end")
    assert end.get("isError") is True
    assert "Unknown tool 'write'" in end["result"][0]["text"]
    assert not (home.project / "child.txt").exists()


async def test_the_general_profile_gets_only_the_parents_tools(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home, tools=["read", "task"])
        _, events = await prompt_and_collect(client, sid, "delegate a write")
    (child,) = child_ids(events)
    end = next(e for e in of_session(events, child) if e["type"] == "tool_execution_end")
    assert "Unknown tool 'write'" in end["result"][0]["text"]
    assert not (home.project / "child.txt").exists()
