"""A subscriber through :class:`agentd.api.RemoteSessions` (agentctl's ``client.sessions``)
receives the events of the sessions its session's ``task`` calls start, each delivery naming
the parent session, as an in-process subscriber does. Real daemon, mock LLM."""

from __future__ import annotations

import asyncio

import pytest

from agentd.api import QueueSubscriber
from agentd.protocol.events import AgentEnd, SubagentStart
from agentd.protocol.methods import PromptParams, SessionNewParams
from tests.harness import Home, scaled, stdio_client

pytestmark = pytest.mark.e2e


async def test_a_remote_subscriber_gets_the_childs_events_with_its_parent(home: Home) -> None:
    async with stdio_client(home) as client:
        watcher = QueueSubscriber()
        new = SessionNewParams(cwd=str(home.project), provider="mock")
        info = await client.sessions.create(new, watcher)
        parent = info.session_id
        prompt = PromptParams(session_id=parent, text="delegate the answer")
        result = await client.sessions.prompt(prompt, watcher)
        assert result.stop_reason == "end_turn"
        seen = []
        async with asyncio.timeout(scaled(20)):
            async for item in watcher.events():
                seen.append(item)
                if isinstance(item.event, AgentEnd) and item.session_id == parent:
                    break
    (start,) = [i.event for i in seen if isinstance(i.event, SubagentStart)]
    child = [i for i in seen if i.session_id == start.child_session_id]
    assert child, "the child's events reached the parent's subscriber"
    assert {i.parent_session_id for i in child} == {parent}
    assert {i.parent_session_id for i in seen if i.session_id == parent} == {None}
