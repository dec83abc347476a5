"""The agent loop: prompt → stream the assistant → run its tool calls → repeat.

:meth:`Agent.run` is the whole loop. It emits every event through one synchronous sink and never
touches the transport or the disk itself (the session runtime persists ``message_end`` events
and fans events out to clients).

Contracts:

- exactly one ``agent_start`` first and one ``agent_end`` last per run, also on error and cancel;
- an assistant message with tool calls always gets one tool result per call, in the order the
  model issued them (synthetic "cancelled" results if the run is cancelled mid-tool);
- steering messages are delivered after the current tool calls, before the next LLM call;
  follow-up messages when the agent would otherwise stop; a cancel drops both queues;
- cancelling the task running :meth:`run` ends it promptly with stop reason ``cancelled``: the
  HTTP stream is closed and running tools are cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from agentd.budget import Budget, project_next_call
from agentd.messages import (
    call_locations,
    cut_short,
    estimate_tokens,
    new_id,
    tool_result_message,
    usable,
    user_message,
)
from agentd.protocol.content import (
    AssistantMessage,
    Message,
    StopReason,
    ToolCall,
    Usage,
    UserContent,
    UserMessage,
)
from agentd.protocol.events import (
    AgentEnd,
    AgentStart,
    ErrorEvent,
    Event,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    QueueUpdate,
    Retry,
    RunStopReason,
    TextDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from agentd.providers.base import Provider, ProviderRequest, StreamEnd
from agentd.tools.base import Tool, ToolContext, ToolResult
from agentd.toolspec import ToolSpec

EventSink = Callable[[Event], None]
Authorizer = Callable[[ToolCall, Tool], Awaitable[str | None]]
"""Decides whether a tool call may run: ``None`` to allow, or the refusal text for the model."""
ToolRunner = Callable[[Tool, dict[str, Any], ToolContext], Awaitable[ToolResult]]
"""Validates the raw arguments against the tool's Params and runs it (``tools.run_tool``)."""
Compactor = Callable[[str], Awaitable[bool]]
"""Summarises older context (reason: threshold or overflow); returns whether it compacted."""


@dataclass
class RunResult:
    """How a run ended (the ``session/prompt`` result)."""

    stop_reason: RunStopReason = "end_turn"
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    refused: list[tuple[ToolCall, str]] = field(default_factory=list)
    """Tool calls the authorizer refused, with the refusal text."""


class _Stop(Exception):
    """Loop control: end the run with this stop reason."""

    def __init__(self, reason: RunStopReason, error: str | None = None) -> None:
        super().__init__(reason)
        self.reason: RunStopReason = reason
        self.error = error


@dataclass
class Agent:
    """One session's conversation and the loop that extends it.

    ``messages`` is the conversation (it grows as the loop runs); ``tools`` the tools by name;
    ``run_tool`` runs one decoded call (validation and ToolError handling live there).
    """

    provider: Provider
    model: str
    system_prompt: str
    tools: dict[str, Tool]
    tool_specs: list[ToolSpec]
    context: ToolContext
    sink: EventSink
    authorize: Authorizer
    run_tool: ToolRunner
    messages: list[Message] = field(default_factory=list)
    max_turns: int = 50
    compact: Compactor | None = None
    steering: deque[str] = field(default_factory=deque)
    follow_up: deque[str] = field(default_factory=deque)
    failure: Exception | None = None
    _result: RunResult = field(default_factory=RunResult, init=False, repr=False)
    _open_turn: int | None = field(default=None, init=False, repr=False)

    # --- the loop ----------------------------------------------------------------------------

    async def run(
        self,
        text: str,
        images: list[UserContent] | None = None,
        *,
        max_turns: int | None = None,
        budget: Budget | None = None,
    ) -> RunResult:
        """Run the agent on a prompt until it stops; never raises for provider/tool failures
        (a failed run ends with an ``error`` event, then ``agent_end``).

        ``max_turns`` limits this run only (default: :attr:`max_turns`); ``budget`` caps its
        spending (stop reason ``budget``, before the model call that would pass a cap).
        """
        result = self._result = RunResult()
        self.sink(AgentStart())
        try:
            await self._loop(user_message(text, images), result, max_turns, budget)
        except _Stop as stop:
            result.stop_reason, result.error = stop.reason, stop.error
        except asyncio.CancelledError:
            self._uncancel()
            result.stop_reason = "cancelled"
            self.drop_queues()
            if self._open_turn is not None:  # the cancelled turn ends too
                self.sink(TurnEnd(turn=self._open_turn, stop_reason="aborted"))
        except Exception as exc:  # a bug must still end the run cleanly (logged by the caller)
            result.stop_reason, result.error = "error", f"internal error: {exc!r}"
            self.failure = exc
        if result.stop_reason == "error" and result.error:
            code = "internal_error" if self.failure else "provider_error"
            self.sink(ErrorEvent(message=result.error, code=code))
        self.sink(
            AgentEnd(
                stop_reason=result.stop_reason,
                turns=result.turns,
                usage=result.usage,
                cost=result.usage.cost,
                error=result.error,
            )
        )
        return result

    async def _loop(
        self, prompt: UserMessage, result: RunResult, max_turns: int | None, budget: Budget | None
    ) -> None:
        limit = max_turns or self.max_turns
        pending: list[UserMessage] = [prompt]
        more = True
        while more:
            if result.turns >= limit:
                raise _Stop("max_turns", f"stopped after {limit} turns (max turns)")
            refusal = budget and self._budget_refusal(budget, result, pending)
            if refusal:
                for message in pending:  # kept in the session, though no model call follows
                    self._add_user(message)
                raise _Stop("budget", refusal)
            result.turns += 1
            self.sink(TurnStart(turn=result.turns))
            self._open_turn = result.turns
            for message in pending:
                self._add_user(message)
            assistant = await self._stream_assistant(result)
            if assistant.stop_reason in ("error", "aborted"):
                self._end_turn(result.turns, assistant.stop_reason)
                raise _Stop("error", assistant.error_message or "the model call failed")
            calls = assistant.tool_calls()
            if calls:
                await self._run_tools(calls)
            self._end_turn(result.turns, assistant.stop_reason)
            pending = self._take(self.steering)
            if not calls and not pending:
                pending = self._take(self.follow_up)
            more = bool(calls or pending)

    def _end_turn(self, turn: int, stop_reason: StopReason) -> None:
        self._open_turn = None
        self.sink(TurnEnd(turn=turn, stop_reason=stop_reason))

    def _budget_refusal(
        self, budget: Budget, result: RunResult, pending: list[UserMessage]
    ) -> str | None:
        """Why the budget forbids the next model call (with ``pending`` added), or None."""
        preamble = len(self.system_prompt) + len(msgspec.json.encode(self.tool_specs))
        context = [m for m in self.messages if usable(m)] + list(pending)
        next_call = project_next_call(context, preamble // 4)
        return budget.refusal(result.usage, next_call, self.provider.price_of(self.model))

    # --- one assistant message ---------------------------------------------------------------

    async def _stream_assistant(self, result: RunResult) -> AssistantMessage:
        """Stream one reply; on context overflow compact once and call the model again."""
        if self.compact is not None:
            await self.compact("threshold")
        end = await self._call_model()
        self._record_assistant(end.message, result)
        if end.context_overflow and self.compact is not None and await self.compact("overflow"):
            end = await self._call_model()
            self._record_assistant(end.message, result)
        return end.message

    def _record_assistant(self, message: AssistantMessage, result: RunResult) -> None:
        self.messages.append(message)
        self.sink(MessageEnd(message=message))
        result.usage = result.usage.add(message.usage)

    async def _call_model(self) -> StreamEnd:
        message_id = new_id()
        request = ProviderRequest(
            model=self.model,
            system_prompt=self.system_prompt,
            messages=[m for m in self.messages if usable(m)],
            tools=self.tool_specs,
            message_id=message_id,
        )
        self.sink(MessageStart(message_id=message_id, role="assistant"))
        text: list[str] = []
        try:
            async with contextlib.aclosing(self.provider.stream(request)) as stream:
                async for item in stream:
                    if isinstance(item, StreamEnd):
                        item.message.id = message_id
                        return item
                    if isinstance(item, Retry):
                        self.sink(item)
                        continue
                    if isinstance(item, TextDelta):
                        text.append(item.text)
                    self.sink(MessageUpdate(delta=item))
        except asyncio.CancelledError:
            partial = self._cut_short(message_id, text, failed=False)
            self.messages.append(partial)
            self.sink(MessageEnd(message=partial))
            self._count_cut_call(request, text)
            raise
        return StreamEnd(self._cut_short(message_id, text, failed=True))

    def _count_cut_call(self, request: ProviderRequest, text: list[str]) -> None:
        """A call cut by a cancel reports no usage, yet its prompt was sent: count an estimate
        (encoded size / 4) in the run's usage, so a cancelled or timed-out run does not report
        zero tokens. The stored message keeps no usage (nothing was measured)."""
        preamble = len(self.system_prompt) + len(msgspec.json.encode(self.tool_specs))
        sent = estimate_tokens(request.messages) + preamble // 4
        estimate = Usage(input_tokens=sent, output_tokens=len("".join(text)) // 4)
        self._result.usage = self._result.usage.add(estimate)

    def _cut_short(self, message_id: str, text: list[str], *, failed: bool) -> AssistantMessage:
        name, model = self.provider.name, self.model
        return cut_short(message_id, "".join(text), provider=name, model=model, failed=failed)

    # --- tool calls --------------------------------------------------------------------------

    async def _run_tools(self, calls: list[ToolCall]) -> None:
        """Start each call (approval is sequential), schedule them, end them in order.

        Scheduling: a mutating call (``tool.mutating``: write, edit, bash…) runs alone, after
        every earlier call finished and before any later call starts; read-only calls between
        two mutating ones run concurrently. So several edits of one file in one reply all land,
        in the model's order, and a read after a write sees the write.

        However the calls end (cancel, a bug), every call gets exactly one
        ``tool_execution_start`` and, after it, one ``tool_execution_end``: calls not started
        yet when a cancel arrives (e.g. behind a pending approval) are started and ended
        with a "cancelled" result.
        """
        schedule = _Schedule()
        tasks = schedule.tasks
        started = finished = 0
        try:
            for call in calls:
                tool = self.tools.get(call.name)
                self._announce(call, tool)
                started += 1
                await self._launch(call, tool, schedule)
            for call, task in zip(calls, tasks, strict=True):
                self._finish_tool(call, await task)
                finished += 1
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for position in range(finished, len(calls)):
                if position >= started:
                    self._announce(calls[position], self.tools.get(calls[position].name))
                self._finish_tool(calls[position], _CANCELLED)

    def _announce(self, call: ToolCall, tool: Tool | None) -> None:
        locations = call_locations(tool, call, self.context) if tool else []
        self.sink(
            ToolExecutionStart(
                tool_call_id=call.id,
                name=call.name,
                args=call.arguments,
                kind=tool.kind if tool else "other",
                locations=locations,
            )
        )

    async def _launch(self, call: ToolCall, tool: Tool | None, schedule: _Schedule) -> None:
        """Authorize ``call`` and add its task to ``schedule`` (it waits for its barrier)."""
        refusal = await self._preflight(call, tool)
        if refusal is not None or tool is None:
            schedule.add(_ready(ToolResult(refusal or "", is_error=True)), mutating=False)
            return
        ctx = replace(self.context, on_update=self._updater(call.id))
        barrier = schedule.barrier(mutating=tool.mutating)
        schedule.add(self._execute(tool, call, ctx, barrier), mutating=tool.mutating)

    async def _preflight(self, call: ToolCall, tool: Tool | None) -> str | None:
        if tool is None:
            known = ", ".join(sorted(self.tools))
            return f"Unknown tool {call.name!r}. Available tools: {known}."
        if call.parse_error:
            return (
                f"The arguments of this {call.name} call are not a valid JSON object "
                f"({call.parse_error}). Call the tool again with valid JSON arguments."
            )
        refusal = await self.authorize(call, tool)
        if refusal is not None:
            self._result.refused.append((call, refusal))
        return refusal

    async def _execute(
        self,
        tool: Tool,
        call: ToolCall,
        ctx: ToolContext,
        barrier: list[asyncio.Task[ToolResult]],
    ) -> ToolResult:
        if barrier:
            await asyncio.wait(barrier)
        result = await self.run_tool(tool, call.arguments, ctx)
        self.context.cwd = ctx.cwd
        return result

    def _updater(self, tool_call_id: str) -> Callable[[str], None]:
        def on_update(delta: str) -> None:
            self.sink(ToolExecutionUpdate(tool_call_id=tool_call_id, output=delta))

        return on_update

    def _finish_tool(self, call: ToolCall, result: ToolResult) -> None:
        message = tool_result_message(call, result)
        self.sink(
            ToolExecutionEnd(
                tool_call_id=call.id,
                name=call.name,
                result=message.content,
                is_error=message.is_error,
                details=message.details,
            )
        )
        self.messages.append(message)
        self.sink(MessageStart(message_id=message.id, role="tool_result"))
        self.sink(MessageEnd(message=message))

    # --- user messages and queues ------------------------------------------------------------

    def _add_user(self, message: UserMessage) -> None:
        self.messages.append(message)
        self.sink(MessageStart(message_id=message.id, role="user"))
        self.sink(MessageEnd(message=message))

    def note(self, text: str) -> None:
        """Add ``text`` as a user message between runs, without calling the model.

        It is emitted (``message_start``, ``message_end``) like a prompt, and the model reads it
        as part of the conversation on the next run. Call it only while no run is in progress.
        """
        self._add_user(user_message(text))

    def _take(self, queue: deque[str]) -> list[UserMessage]:
        if not queue:
            return []
        texts = list(queue)
        queue.clear()
        self._queue_changed()
        return [user_message(text) for text in texts]

    def enqueue(self, text: str, *, steer: bool) -> None:
        """Queue a steering (``steer``) or follow-up message for the running loop."""
        (self.steering if steer else self.follow_up).append(text)
        self._queue_changed()

    def drop_queues(self) -> list[str]:
        """Empty both queues; return the dropped texts (reported to the canceller)."""
        dropped = [*self.steering, *self.follow_up]
        if dropped:
            self.steering.clear()
            self.follow_up.clear()
            self._queue_changed()
        return dropped

    def _queue_changed(self) -> None:
        self.sink(QueueUpdate(steering=list(self.steering), follow_up=list(self.follow_up)))

    @staticmethod
    def _uncancel() -> None:
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()


@dataclass
class _Schedule:
    """The tasks of one reply's tool calls, in the model's order, and what each waits for.

    A mutating call waits for every earlier task; a read-only call waits only for the last
    mutating task before it (so read-only calls between two mutating ones overlap).
    """

    tasks: list[asyncio.Task[ToolResult]] = field(default_factory=list)
    last_mutating: asyncio.Task[ToolResult] | None = None

    def barrier(self, *, mutating: bool) -> list[asyncio.Task[ToolResult]]:
        if mutating:
            return list(self.tasks)
        return [self.last_mutating] if self.last_mutating else []

    def add(self, work: Coroutine[Any, Any, ToolResult], *, mutating: bool) -> None:
        task = asyncio.create_task(work)
        self.tasks.append(task)
        if mutating:
            self.last_mutating = task


_CANCELLED = ToolResult(
    "cancelled: the run was cancelled before this tool call finished", is_error=True
)


async def _ready(result: ToolResult) -> ToolResult:
    return result
