"""The agent loop owns its context: it adopts the context a compaction returns, a sink that
cannot go on ends the run without cancelling it, a failure found outside the loop ends the run
through ``abort``, and the calls of a reply cut off at the output limit do not run."""

from __future__ import annotations

import asyncio

from agentd.agent.run import RunRequest
from agentd.agent.scheduling import CUT_OFF, SinkFailed
from agentd.protocol.content import Message, TextContent, ToolResultMessage, UserMessage
from agentd.protocol.events import (
    AgentEnd,
    ErrorEvent,
    Event,
    MessageEnd,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
)
from agentd.providers.base import ProviderRequest
from tests.fakes import ScriptedProvider, reply
from tests.harness import scaled
from tests.test_agent import Recorder, make_agent

SUMMARY = UserMessage(id="summary", content=[TextContent(text="the summary")], timestamp=0.0)


def _sent(request: ProviderRequest) -> list[str]:
    return [m.id for m in request.messages]


async def test_the_loop_adopts_the_context_a_compaction_returns() -> None:
    """The transform gets a copy of the context; the list it returns becomes the agent's
    conversation (the same object, grown by the loop), and the next model call sends it."""
    events: list[Event] = []
    given: list[list[Message]] = []
    returned: list[Message] = []

    async def compact(
        messages: list[Message], reason: str, binding: object
    ) -> list[Message] | None:
        given.append(messages)
        if len(given) != 2:  # compact once: before the second model call
            return None
        returned.extend([SUMMARY, messages[-1]])
        return returned

    agent = make_agent(
        [reply("", [("echo", {"text": "x"})]), reply("done")], events, transform_context=compact
    )
    before = agent.messages
    result = await agent.run(RunRequest("go"))
    assert result.stop_reason == "end_turn"
    assert given[1] is not before
    assert given[1] is not agent.messages
    assert agent.messages is returned
    assert [m.id for m in agent.messages[:2]] == ["summary", given[1][-1].id]
    assert agent.messages[-1].text() == "done"  # type: ignore[union-attr]
    provider = agent.provider
    assert isinstance(provider, ScriptedProvider)
    assert _sent(provider.requests[1]) == ["summary", given[1][-1].id]
    assert len(before) == 3  # the old list was not rewritten: user, reply, tool result


async def test_a_sink_that_cannot_go_on_ends_the_run_without_cancelling_it() -> None:
    """The sink raises SinkFailed for the tool result's message_end: the run ends with its
    error and code, every started call and turn ends, and the run's task is never cancelled."""
    events = Recorder()
    failed = False

    def sink(event: Event) -> None:
        nonlocal failed
        events.append(event)
        is_result = isinstance(event, MessageEnd) and isinstance(event.message, ToolResultMessage)
        if is_result and not failed:
            failed = True
            raise SinkFailed("disk full: no space left", "store_error")

    calls = [("echo", {"text": "a"}), ("echo", {"text": "b", "sleep": 5})]
    agent = make_agent([reply("", calls), reply("never")], events)
    agent.sink = sink
    task = asyncio.create_task(agent.run(RunRequest("go")))
    result = await asyncio.wait_for(task, scaled(10))
    assert (result.stop_reason, result.error) == ("error", "disk full: no space left")
    assert task.cancelling() == 0
    assert not task.cancelled()
    assert events[-2] == ErrorEvent(message="disk full: no space left", code="store_error")
    assert isinstance(events[-1], AgentEnd)
    assert events[-1].stop_reason == "error"
    starts = [e.tool_call_id for e in events if isinstance(e, ToolExecutionStart)]
    ends = [e.tool_call_id for e in events if isinstance(e, ToolExecutionEnd)]
    assert starts == ends == ["call_0_echo", "call_1_echo"]
    assert [e.stop_reason for e in events if isinstance(e, TurnEnd)] == ["aborted"]
    provider = agent.provider
    assert isinstance(provider, ScriptedProvider)
    assert len(provider.requests) == 1


async def test_abort_ends_the_run_with_the_failure_not_as_cancelled() -> None:
    """A failure found outside the loop (a failed fsync) ends a streaming run through abort:
    stop reason error, its code, not ``cancelled``; with no run, abort does nothing."""
    events = Recorder()
    agent = make_agent([reply("a long streamed reply " * 20)], events, delay=0.02)
    assert agent.abort(SinkFailed("disk full", "store_error")) is False
    task = asyncio.create_task(agent.run(RunRequest("go")))
    await asyncio.wait_for(events.first(MessageUpdate), scaled(10))
    assert agent.abort(SinkFailed("disk full", "store_error")) is True
    result = await asyncio.wait_for(task, scaled(10))
    assert (result.stop_reason, result.error, result.error_code) == (
        "error",
        "disk full",
        "store_error",
    )
    assert ErrorEvent(message="disk full", code="store_error") in events
    assert isinstance(events[-1], AgentEnd)


async def test_the_calls_of_a_reply_cut_off_at_max_tokens_do_not_run() -> None:
    """Stop reason ``length``: no call is authorized or run; each ends with the cut-off error
    the next model call sends; the run goes on."""
    events: list[Event] = []
    asked: list[str] = []

    async def authorize(call: object, tool: object) -> str | None:
        asked.append("asked")
        return None

    cut = reply("", [("echo", {"text": "a"}), ("echo", {"text": "b"})], stop="length")
    agent = make_agent([cut, reply("again")], events, authorize=authorize)
    result = await agent.run(RunRequest("go"))
    assert result.stop_reason == "end_turn"
    assert asked == []
    assert not any(isinstance(e, ToolExecutionUpdate) for e in events)
    ends = [e for e in events if isinstance(e, ToolExecutionEnd)]
    assert [(e.is_error, e.result[0].text) for e in ends] == [(True, CUT_OFF)] * 2  # type: ignore[union-attr]
    provider = agent.provider
    assert isinstance(provider, ScriptedProvider)
    sent = provider.requests[1].messages
    assert [m.content[0].text for m in sent if isinstance(m, ToolResultMessage)] == [  # type: ignore[union-attr]
        CUT_OFF,
        CUT_OFF,
    ]
