"""``session/note`` and the per-run ``maxTurns`` of ``session/prompt``, through the library
against a real private daemon, and through ``agentctl send`` on an existing session."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from agentctl.client import AgentClient, spawn_stdio
from agentd.errors import InvalidParams, SessionBusy
from agentd.protocol.content import TextContent, UserMessage
from agentd.protocol.events import MessageEnd, MessageUpdate
from agentd.protocol.methods import (
    PromptParams,
    SessionIdParams,
    SessionNewParams,
    SessionNoteParams,
)
from tests.agentctl.harness import Sandbox, json_lines
from tests.harness import scaled

pytestmark = pytest.mark.e2e


@pytest.fixture
async def client(sandbox: Sandbox) -> AsyncIterator[AgentClient]:
    """A private daemon (``agentd serve --stdio``) in the sandbox."""
    agent = await spawn_stdio(cwd=str(sandbox.project), env=sandbox.env)
    try:
        yield agent
    finally:
        await agent.close()


def user_texts(messages: Sequence[object]) -> list[str]:
    return [
        part.text
        for message in messages
        if isinstance(message, UserMessage)
        for part in message.content
        if isinstance(part, TextContent)
    ]


async def test_a_note_is_recorded_broadcast_and_kept_before_the_next_prompt(
    client: AgentClient, sandbox: Sandbox
) -> None:
    """The note becomes a user message: in the file, as a live event, then in the context."""
    info = await client.sessions.create(SessionNewParams(cwd=str(sandbox.project), provider="mock"))
    async with client.events(info.session_id) as events:
        await client.sessions.note(
            SessionNoteParams(session_id=info.session_id, text="$ echo hi\nhi")
        )
        seen = await asyncio.wait_for(anext(aiter(events)), scaled(5))
        while not isinstance(seen.event, MessageEnd):
            seen = await asyncio.wait_for(anext(aiter(events)), scaled(5))
    assert seen.seq > 0
    assert isinstance(seen.event.message, UserMessage)
    result = await client.sessions.prompt(
        PromptParams(session_id=info.session_id, text="how are you")
    )
    assert result.stop_reason == "end_turn"
    assert user_texts(
        (await client.sessions.messages(SessionIdParams(session_id=info.session_id))).messages
    ) == ["$ echo hi\nhi", "how are you"]
    assert info.path is not None
    entries = [json.loads(line) for line in Path(info.path).read_text().splitlines()[1:]]
    stored = [e["message"] for e in entries if e["type"] == "message"]
    assert stored[0]["content"] == [{"type": "text", "text": "$ echo hi\nhi"}]


async def test_a_note_is_refused_while_running_or_empty(
    client: AgentClient, sandbox: Sandbox
) -> None:
    """-32002 during a run (steer is the running counterpart), -32602 for blank text."""
    info = await client.sessions.create(SessionNewParams(cwd=str(sandbox.project), provider="mock"))
    async with client.events(info.session_id) as events:
        run = asyncio.create_task(
            client.sessions.prompt(PromptParams(session_id=info.session_id, text="be slow"))
        )
        async for item in events:
            if isinstance(item.event, MessageUpdate):
                break
        with pytest.raises(SessionBusy):
            await client.sessions.note(
                SessionNoteParams(session_id=info.session_id, text="too late")
            )
        await client.sessions.cancel(SessionIdParams(session_id=info.session_id))
        assert (await run).stop_reason == "cancelled"
    with pytest.raises(InvalidParams):
        await client.sessions.note(SessionNoteParams(session_id=info.session_id, text="  "))


async def test_max_turns_limits_one_run_only(client: AgentClient, sandbox: Sandbox) -> None:
    """maxTurns on a prompt overrides the session's limit for that run; 0 is refused."""
    info = await client.sessions.create(
        SessionNewParams(cwd=str(sandbox.project), provider="mock", max_turns=5)
    )
    limited = await client.sessions.prompt(
        PromptParams(session_id=info.session_id, text="loop forever", max_turns=2)
    )
    assert (limited.stop_reason, limited.turns) == ("max_turns", 2)
    default = await client.sessions.prompt(
        PromptParams(session_id=info.session_id, text="loop forever")
    )
    assert (default.stop_reason, default.turns) == ("max_turns", 5)
    with pytest.raises(InvalidParams):
        await client.call(
            "session/prompt", {"sessionId": info.session_id, "text": "hi", "maxTurns": 0}
        )


def test_send_max_turns_applies_to_an_existing_session(sandbox: Sandbox) -> None:
    """--max-turns with --session limits that run (exit 3), with no 'ignored' warning."""
    first = sandbox.run("send", "--stdio", "--json", "--provider", "mock", "how are you")
    session_id = json_lines(first.stdout)[0]["sessionId"]
    again = sandbox.run(
        "send", "--stdio", "--json", "--session", session_id, "--max-turns", "2", "loop forever"
    )
    assert again.returncode == 3, again.stderr
    assert "ignored" not in again.stderr
    final = json_lines(again.stdout)[-1]
    assert (final["stopReason"], final["turns"]) == ("max_turns", 2)
