"""The agent loop against a scripted provider and a real (tiny) tool."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentd.agent.loop import Agent
from agentd.agent.run import RunRequest
from agentd.protocol.content import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from agentd.protocol.events import (
    AgentEnd,
    AgentStart,
    ErrorEvent,
    Event,
    MessageEnd,
    MessageUpdate,
    QueueUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnStart,
)
from agentd.tools.base import Tool, ToolContext, ToolResult, Toolset
from agentd.toolspec import ToolSpec
from tests.fakes import EchoTool, ScriptedProvider, reply
from tests.harness import scaled, wait_until_async


async def run_echo(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    params = msgspec.convert(args, tool.Params)
    return await tool.run(params, ctx)


def make_agent(turns: list[Any], events: list[Event], **kw: Any) -> Agent:
    async def allow(call: ToolCall, tool: Tool) -> str | None:
        return None

    return Agent(
        provider=ScriptedProvider(turns, delay=kw.pop("delay", 0.0)),
        model="m",
        system_prompt="sys",
        toolset=Toolset({"echo": EchoTool()}, [ToolSpec("echo", "Echo", {"type": "object"})]),
        context=ToolContext(cwd=Path.cwd()),
        sink=events.append,
        authorize=kw.pop("authorize", allow),
        run_tool=run_echo,
        **kw,
    )


class Recorder(list[Event]):
    """A test agent's sink: records events; :meth:`first` waits for the first of a type."""

    def __init__(self) -> None:
        super().__init__()
        self._waiting: list[tuple[type[Event], asyncio.Future[Event]]] = []

    def append(self, event: Event) -> None:
        super().append(event)
        for kind, future in self._waiting:
            if isinstance(event, kind) and not future.done():
                future.set_result(event)

    async def first(self, kind: type[Event]) -> Event:
        seen = next((e for e in self if isinstance(e, kind)), None)
        if seen is not None:
            return seen
        future: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._waiting.append((kind, future))
        async with asyncio.timeout(scaled(10)):
            return await future


def types(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


async def test_text_reply_streams_deltas_and_ends_once() -> None:
    """A plain reply yields start, deltas, end, and exactly one agent_end with end_turn."""
    events: list[Event] = []
    agent = make_agent([reply("hello there")], events)
    result = await agent.run(RunRequest("hi"))
    assert result.stop_reason == "end_turn"
    assert result.turns == 1
    assert isinstance(events[0], AgentStart)
    assert isinstance(events[-1], AgentEnd)
    assert sum(isinstance(e, AgentEnd) for e in events) == 1
    deltas = [e.delta.text for e in events if isinstance(e, MessageUpdate)]  # type: ignore[union-attr]
    assert "".join(deltas) == "hello there"
    assert [type(m) for m in agent.messages] == [UserMessage, AssistantMessage]


async def test_tool_round_trip_orders_results_as_issued() -> None:
    """Concurrent tool calls end in the order the model issued them, even if finished later."""
    events: list[Event] = []
    calls = [("echo", {"text": "slow", "sleep": 0.05}), ("echo", {"text": "fast"})]
    agent = make_agent([reply("", calls), reply("done")], events)
    result = await agent.run(RunRequest("go"))
    assert result.turns == 2
    ends = [e for e in events if isinstance(e, ToolExecutionEnd)]
    assert [e.result[0].text for e in ends] == ["slow", "fast"]  # type: ignore[union-attr]
    updates = [e for e in events if isinstance(e, ToolExecutionUpdate)]
    assert {u.output for u in updates} == {"slow", "fast"}
    results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["call_0_echo", "call_1_echo"]


async def test_unknown_tool_and_bad_json_become_error_results() -> None:
    """An unknown tool name or unparsable arguments give error results; the loop goes on."""
    events: list[Event] = []
    bad = reply("", [("echo", {})])
    call = bad[-1].message.content[0]  # type: ignore[union-attr]
    call.parse_error = "Expecting value"
    agent = make_agent([reply("", [("nope", {})]), bad, reply("ok")], events)
    result = await agent.run(RunRequest("go"))
    assert result.stop_reason == "end_turn"
    errors = [e for e in events if isinstance(e, ToolExecutionEnd)]
    assert all(e.is_error for e in errors)
    assert "Unknown tool 'nope'" in errors[0].result[0].text  # type: ignore[union-attr]
    assert "not a valid JSON object" in errors[1].result[0].text  # type: ignore[union-attr]


async def test_max_turns_stops_a_looping_model() -> None:
    """A model that never stops calling tools is stopped at max_turns."""
    events: list[Event] = []
    turns = [reply("", [("echo", {"text": str(i)})]) for i in range(10)]
    agent = make_agent(turns, events, max_turns=3)
    result = await agent.run(RunRequest("loop"))
    assert result.stop_reason == "max_turns"
    assert result.turns == 3
    assert isinstance(events[-1], AgentEnd)
    assert events[-1].stop_reason == "max_turns"


async def test_provider_error_ends_run_with_error() -> None:
    """A StreamEnd with stop_reason error ends the run with that error text."""
    events: list[Event] = []
    failed = reply("", stop="error")
    failed[-1].message.error_message = "HTTP 500: boom"  # type: ignore[union-attr]
    agent = make_agent([failed], events)
    result = await agent.run(RunRequest("hi"))
    assert result.stop_reason == "error"
    assert result.error == "HTTP 500: boom"
    assert isinstance(events[-1], AgentEnd)
    assert events[-2] == ErrorEvent(message="HTTP 500: boom", code="provider_error")


async def test_cancel_mid_tool_gives_cancelled_results_and_one_agent_end() -> None:
    """Cancelling during a tool call records a cancelled result for every call."""
    events: list[Event] = []
    agent = make_agent([reply("", [("echo", {"text": "x", "sleep": 5})])], events)
    task = asyncio.create_task(agent.run(RunRequest("go")))
    await wait_until_async(lambda: any(isinstance(e, ToolExecutionStart) for e in events))
    task.cancel()
    result = await task
    assert result.stop_reason == "cancelled"
    results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert len(results) == 1
    assert results[0].is_error
    assert "cancelled" in results[0].content[0].text  # type: ignore[union-attr]
    assert sum(isinstance(e, AgentEnd) for e in events) == 1


async def test_cancel_mid_stream_keeps_partial_text() -> None:
    """Cancelling while streaming ends the message as aborted with the text so far."""
    events: list[Event] = []
    agent = make_agent([reply("a long reply " * 20)], events, delay=0.002)
    task = asyncio.create_task(agent.run(RunRequest("go")))
    await wait_until_async(lambda: sum(isinstance(e, MessageUpdate) for e in events) >= 3)
    task.cancel()
    result = await task
    assert result.stop_reason == "cancelled"
    last = agent.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.stop_reason == "aborted"
    assert last.text().startswith("a long")
    ends = [e for e in events if isinstance(e, MessageEnd)]
    assert ends[-1].message is last


async def test_steering_is_delivered_before_the_next_llm_call() -> None:
    """A steering message queued during a tool call is the next user message the model sees."""
    events = Recorder()
    agent = make_agent(
        [reply("", [("echo", {"text": "x", "sleep": 0.05})]), reply("steered"), reply("x")], events
    )
    task = asyncio.create_task(agent.run(RunRequest("go")))
    await events.first(ToolExecutionStart)  # the tool runs (50 ms): steer now
    agent.enqueue("change course", steer=True)
    result = await task
    assert result.turns == 2
    provider = agent.provider
    assert isinstance(provider, ScriptedProvider)
    second = provider.requests[1].messages
    assert isinstance(second[-1], UserMessage)
    assert second[-1].content[0].text == "change course"  # type: ignore[union-attr]
    assert any(isinstance(e, QueueUpdate) and e.steering == ["change course"] for e in events)


async def test_follow_up_runs_when_the_agent_would_stop() -> None:
    """A follow-up is delivered only after the model stops calling tools."""
    events = Recorder()
    agent = make_agent([reply("first", []), reply("second")], events, delay=0.01)
    task = asyncio.create_task(agent.run(RunRequest("go")))
    await events.first(MessageUpdate)  # the first reply streams (10 ms a chunk)
    agent.enqueue("and then?", steer=False)
    result = await task
    assert result.turns == 2
    assert sum(isinstance(e, TurnStart) for e in events) == 2
    assert agent.messages[-1].text() == "second"  # type: ignore[union-attr]


async def test_refused_permission_is_an_error_result() -> None:
    """When the authorizer refuses, the tool does not run and the model reads the reason."""
    events: list[Event] = []

    async def deny(call: ToolCall, tool: Tool) -> str | None:
        return "Permission denied: read-only session"

    agent = make_agent([reply("", [("echo", {"text": "x"})]), reply("ok")], events, authorize=deny)
    await agent.run(RunRequest("go"))
    end = next(e for e in events if isinstance(e, ToolExecutionEnd))
    assert end.is_error
    assert not any(isinstance(e, ToolExecutionUpdate) for e in events)


@pytest.mark.parametrize("overflow_fixed", [True, False])
async def test_context_overflow_compacts_once_and_retries(overflow_fixed: bool) -> None:
    """On a context-overflow error the loop compacts once and calls the model again."""
    from agentd.providers.base import StreamEnd

    events: list[Event] = []
    overflow = reply("", stop="error")
    end = overflow[-1]
    assert isinstance(end, StreamEnd)
    end.message.error_message = "context too long"
    overflow[-1] = StreamEnd(end.message, context_overflow=True)
    calls: list[str] = []

    async def compact(
        messages: list[Message], reason: str, binding: object
    ) -> list[Message] | None:
        if reason == "threshold":
            return None
        calls.append(reason)
        return list(messages) if overflow_fixed else None

    agent = make_agent([overflow, reply("fine")], events, transform_context=compact)
    result = await agent.run(RunRequest("hi"))
    assert calls == ["overflow"]
    assert result.stop_reason == ("end_turn" if overflow_fixed else "error")


async def test_cancel_during_approval_starts_and_ends_every_call_in_order() -> None:
    """A cancel while the first call awaits approval ends all calls, each after its start."""
    events: list[Event] = []
    asked = asyncio.Event()

    async def wait_forever(call: ToolCall, tool: Tool) -> str | None:
        asked.set()
        await asyncio.Event().wait()
        return None

    calls = [("echo", {"text": "a"}), ("echo", {"text": "b"}), ("nope", {})]
    agent = make_agent([reply("", calls)], events, authorize=wait_forever)
    task = asyncio.create_task(agent.run(RunRequest("go")))
    await asyncio.wait_for(asked.wait(), scaled(5))
    task.cancel()
    result = await task
    assert result.stop_reason == "cancelled"
    tool_events = [
        (type(e).__name__, e.tool_call_id)
        for e in events
        if isinstance(e, ToolExecutionStart | ToolExecutionEnd)
    ]
    ids = ["call_0_echo", "call_1_echo", "call_2_nope"]
    assert tool_events == [
        ("ToolExecutionStart", ids[0]),
        ("ToolExecutionEnd", ids[0]),
        ("ToolExecutionStart", ids[1]),
        ("ToolExecutionEnd", ids[1]),
        ("ToolExecutionStart", ids[2]),
        ("ToolExecutionEnd", ids[2]),
    ]
    results = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ids
    assert all(r.is_error for r in results)
    assert isinstance(events[-1], AgentEnd)


async def test_a_bug_ends_the_run_with_an_internal_error_event() -> None:
    """A provider that raises (a bug) still ends the run: error event, then one agent_end."""

    class Broken:
        name = "broken"

        async def stream(self, request: Any) -> AsyncIterator[Any]:
            raise RuntimeError("parser bug")
            yield

    events: list[Event] = []
    agent = make_agent([], events)
    agent.provider = Broken()
    result = await agent.run(RunRequest("hi"))
    assert (result.stop_reason, result.error) == (
        "error",
        "internal error: RuntimeError('parser bug')",
    )
    assert isinstance(result.failure, RuntimeError)
    assert events[-2] == ErrorEvent(message=result.error, code="internal_error")
    assert isinstance(events[-1], AgentEnd)


class _Tracked(EchoTool):
    """Echo that records when each call runs; ``mutating`` set per instance."""

    def __init__(self, name: str, mutating: bool, log: list[str]) -> None:
        self.name = name  # type: ignore[misc]
        self.mutating = mutating  # type: ignore[misc]
        self.log = log

    async def run(self, params: EchoTool.Params, ctx: ToolContext) -> ToolResult:
        self.log.append(f"+{params.text}")
        await asyncio.sleep(params.sleep)
        self.log.append(f"-{params.text}")
        return ToolResult(params.text)


async def test_mutating_calls_run_alone_in_order_read_only_calls_overlap() -> None:
    """write-like calls never overlap anything; read-only calls between them run together."""
    events: list[Event] = []
    log: list[str] = []
    calls = [
        ("look", {"text": "r1", "sleep": 0.03}),
        ("look", {"text": "r2", "sleep": 0.01}),
        ("poke", {"text": "w1", "sleep": 0.03}),
        ("poke", {"text": "w2", "sleep": 0.0}),
        ("look", {"text": "r3", "sleep": 0.02}),
        ("look", {"text": "r4", "sleep": 0.0}),
        ("poke", {"text": "w3", "sleep": 0.0}),
    ]
    agent = make_agent([reply("", calls), reply("done")], events)
    tools = {"look": _Tracked("look", False, log), "poke": _Tracked("poke", True, log)}
    agent.toolset = Toolset(tools, [])
    await agent.run(RunRequest("go"))
    first = ["+r1", "+r2", "-r2", "-r1", "+w1", "-w1", "+w2", "-w2"]
    assert log == [*first, "+r3", "+r4", "-r4", "-r3", "+w3", "-w3"]
    ends = [e.tool_call_id for e in events if isinstance(e, ToolExecutionEnd)]
    assert ends == [f"call_{n}_{name}" for n, (name, _) in enumerate(calls)]


async def test_a_cancelled_command_keeps_what_it_printed(tmp_path: Path) -> None:
    """A real bash command cancelled mid-run: its result (the end event every client shows,
    and the tool result the model reads) keeps the output streamed so far, then says it was
    cancelled."""
    from agentd.tools import TOOLS, run_tool

    events: list[Event] = []
    bash = TOOLS["bash"]()
    command = {"command": "echo first-line; echo second-line; sleep 30"}
    agent = Agent(
        provider=ScriptedProvider([reply("", [("bash", command)])]),
        model="m",
        system_prompt="sys",
        toolset=Toolset({"bash": bash}, [ToolSpec("bash", "Run", {"type": "object"})]),
        context=ToolContext(cwd=tmp_path),
        sink=events.append,
        authorize=lambda call, tool: asyncio.sleep(0, None),
        run_tool=run_tool,
    )
    task = asyncio.create_task(agent.run(RunRequest("go")))

    def printed() -> bool:
        streamed = "".join(e.output for e in events if isinstance(e, ToolExecutionUpdate))
        return "second-line" in streamed

    await wait_until_async(printed, timeout=scaled(20))
    task.cancel()
    assert (await task).stop_reason == "cancelled"
    end = next(e for e in events if isinstance(e, ToolExecutionEnd))
    shown = end.result[0].text  # type: ignore[union-attr]
    assert shown.startswith("first-line\nsecond-line\n")
    assert shown.endswith("[cancelled: the run was cancelled before this tool call finished]")
    assert end.is_error
    stored = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    assert stored.content[0].text == shown  # type: ignore[union-attr]
