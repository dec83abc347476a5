"""The parts of the agent loop around its core: the steering and follow-up queues, and
running one reply's tool calls.

:class:`MessageQueues`: texts queued for a running loop. Steering messages are delivered
after the current tool calls, follow-ups only when the loop would otherwise stop; every
change is reported (``queue_update``); both queues together are capped (a full queue refuses
more with SessionBusy).

:class:`ToolSchedule`: a mutating call (``tool.mutating``: write, edit, bash…) waits for
every earlier call; a read-only call waits only for the last mutating call before it, so
read-only calls between two mutating ones overlap and several edits of one file in one reply
all land, in the model's order.

:class:`ToolRound`: one reply's calls: announced and authorized in order (approval is
sequential), scheduled, ended in order; a ledger of the calls keeps the event contract (one
``tool_execution_start`` and one ``tool_execution_end`` per call) however the round ends. The
calls share the session's :class:`~agentd.tools.base.ToolContext` (each through its own view,
for its updates); the round itself changes nothing in it. The calls of a reply cut off at the
output token limit are not run: each gets an error result (:data:`CUT_OFF`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import msgspec

from agentd.agent.hooks import NO_HOOKS, RunHooks, post_tool, pre_tool
from agentd.agent.messages import call_locations, tool_result_message
from agentd.errors import SessionBusy
from agentd.protocol.content import ToolCall, ToolResultMessage
from agentd.protocol.events import (
    Event,
    QueueUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from agentd.tools.base import Tool, ToolContext, ToolResult, Toolset

EventSink = Callable[[Event], None]
"""Takes every event of a run, in order. It never cancels the run it reports: when it cannot
take the run's events any more it raises :class:`SinkFailed`, and the loop ends the run."""
Authorizer = Callable[[ToolCall, Tool], Awaitable[str | None]]
"""Decides whether a tool call may run: ``None`` to allow, or the refusal text for the model."""
ToolRunner = Callable[[Tool, dict[str, Any], ToolContext], Awaitable[ToolResult]]
"""Validates the raw arguments against the tool's Params and runs it (``tools.run_tool``)."""


class SinkFailed(Exception):
    """Raised by an :data:`EventSink` that cannot go on (the session file cannot be written):
    the run ends at once with stop reason ``error``, ``message`` as its error and an ``error``
    event with ``code``."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


MAX_QUEUED_MESSAGES = 64
"""Most texts waiting in one session's two queues together."""
MAX_QUEUED_BYTES = 256 * 1024
"""Most UTF-8 bytes waiting in one session's two queues together."""


class MessageQueues:
    """The steering and follow-up texts of one session; ``on_change`` gets a
    :class:`QueueUpdate` after every change.

    Both queues together hold at most :data:`MAX_QUEUED_MESSAGES` texts and
    :data:`MAX_QUEUED_BYTES` bytes, so each ``queue_update`` (it carries the whole queues)
    stays small however many texts a client sends.
    """

    def __init__(self, on_change: Callable[[QueueUpdate], None]) -> None:
        self.steering: deque[str] = deque()
        self.follow_up: deque[str] = deque()
        self._on_change = on_change
        self._bytes = 0

    def enqueue(self, text: str, *, steer: bool) -> None:
        """Queue ``text``; SessionBusy (nothing queued) when the queues are full."""
        size = len(text.encode("utf-8", "surrogatepass"))
        waiting = len(self.steering) + len(self.follow_up)
        if waiting >= MAX_QUEUED_MESSAGES or self._bytes + size > MAX_QUEUED_BYTES:
            raise SessionBusy(
                f"the session's queue is full ({waiting} messages, {self._bytes:,} bytes "
                f"waiting; at most {MAX_QUEUED_MESSAGES} messages and {MAX_QUEUED_BYTES:,} "
                "bytes): wait until the run takes them, or cancel it"
            )
        (self.steering if steer else self.follow_up).append(text)
        self._bytes += size
        self._changed()

    def next_texts(self, *, tools_ran: bool) -> list[str]:
        """What the loop delivers next: the steering texts; when there are none and the
        model called no tool (it would stop), the follow-ups. Taken texts leave the queue."""
        queue = self.steering if self.steering or tools_ran else self.follow_up
        texts = list(queue)
        if texts:
            queue.clear()
            self._recount()
            self._changed()
        return texts

    def drop(self) -> list[str]:
        """Empty both queues; return the dropped texts."""
        dropped = [*self.steering, *self.follow_up]
        if dropped:
            self.steering.clear()
            self.follow_up.clear()
            self._recount()
            self._changed()
        return dropped

    def _recount(self) -> None:
        waiting = [*self.steering, *self.follow_up]
        self._bytes = sum(len(text.encode("utf-8", "surrogatepass")) for text in waiting)

    def _changed(self) -> None:
        self._on_change(QueueUpdate(steering=list(self.steering), follow_up=list(self.follow_up)))


class ToolSchedule:
    """The tasks of one reply's tool calls, in the model's order (see the module docstring)."""

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[ToolResult]] = []
        self._last_mutating: asyncio.Task[ToolResult] | None = None

    def barrier(self, *, mutating: bool) -> list[asyncio.Task[ToolResult]]:
        """The tasks a new call must wait for."""
        if mutating:
            return list(self.tasks)
        return [self._last_mutating] if self._last_mutating else []

    def add(
        self, work: Coroutine[Any, Any, ToolResult], *, mutating: bool
    ) -> asyncio.Task[ToolResult]:
        task = asyncio.create_task(work)
        self.tasks.append(task)
        if mutating:
            self._last_mutating = task
        return task

    async def cancel_all(self) -> None:
        """Cancel every task still running and wait until all have ended."""
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


class _CallRecord(msgspec.Struct):
    """One tool call of a reply in the ledger: announced (``tool_execution_start`` sent),
    its task once scheduled, ended (``tool_execution_end`` sent)."""

    call: ToolCall
    tool: Tool | None
    announced: bool = False
    task: asyncio.Task[ToolResult] | None = None
    ended: bool = False
    output: str = ""
    """The end of what the call streamed so far (at most :data:`KEPT_OUTPUT_CHARS`)."""

    def heard(self, delta: str) -> None:
        """Keep ``delta`` of the running output (the last characters only)."""
        self.output = (self.output + delta)[-KEPT_OUTPUT_CHARS:]

    def cancelled(self) -> ToolResult:
        """The result of a call the run's cancel ended: what it printed so far is kept."""
        if not self.output:
            return _CANCELLED
        cut = "…" if len(self.output) >= KEPT_OUTPUT_CHARS else ""
        text = f"{self.output.rstrip(chr(10))}\n\n[{_CANCELLED.output}]"
        return ToolResult(cut + text, is_error=True)


class ToolRound:
    """Runs the tool calls of one assistant reply (see :meth:`run`)."""

    def __init__(
        self,
        toolset: Toolset,
        context: ToolContext,
        sink: EventSink,
        authorize: Authorizer,
        run_tool: ToolRunner,
        hooks: RunHooks = NO_HOOKS,
    ) -> None:
        self._toolset = toolset
        self._context = context
        self._sink = sink
        self._authorize = authorize
        self._run_tool = run_tool
        self._hooks = hooks

    async def run(
        self,
        calls: list[ToolCall],
        *,
        refused: list[tuple[ToolCall, str]],
        add_result: Callable[[ToolResultMessage], None],
        cut_off: bool = False,
    ) -> None:
        """Announce and authorize each call in order (approval is sequential), schedule them
        (:class:`ToolSchedule`), end them in order. ``cut_off``: the reply was cut at the
        output token limit, so its calls' arguments may be incomplete: none runs or is
        authorized, each ends with the error :data:`CUT_OFF`. The hooks see each call before
        it is authorized (``pre_tool``, which may block it) and after it ran (``post_tool``,
        which may add to its result).

        The ledger keeps the contract however the calls end (cancel, a bug): every call gets
        exactly one ``tool_execution_start`` and, after it, one ``tool_execution_end``; calls
        not ended get a "cancelled" result that keeps the end of what they streamed (a cancelled
        command's output so far is shown, stored and seen by the model).
        """
        ledger = [_CallRecord(call, self._toolset.by_name.get(call.name)) for call in calls]
        schedule = ToolSchedule()
        try:
            for record in ledger:
                self._announce(record)
                record.task = await self._launch(record, schedule, refused, cut_off)
            for record in ledger:
                assert record.task is not None
                add_result(self._finish(record, await record.task))
        finally:
            await schedule.cancel_all()
            for record in ledger:
                if not record.ended:
                    self._announce(record)
                    add_result(self._finish(record, record.cancelled()))

    def _announce(self, record: _CallRecord) -> None:
        if record.announced:
            return
        record.announced = True
        call, tool = record.call, record.tool
        locations = call_locations(tool, call, self._context) if tool else []
        self._sink(
            ToolExecutionStart(
                tool_call_id=call.id,
                name=call.name,
                args=call.arguments,
                kind=tool.kind if tool else "other",
                locations=locations,
            )
        )

    async def _launch(
        self,
        record: _CallRecord,
        schedule: ToolSchedule,
        refused: list[tuple[ToolCall, str]],
        cut_off: bool,
    ) -> asyncio.Task[ToolResult]:
        """Authorize the call and schedule it (it waits for its barrier)."""
        call, tool = record.call, record.tool
        refusal = CUT_OFF if cut_off else await self._preflight(call, tool, refused)
        if refusal is not None or tool is None:
            return schedule.add(_ready(ToolResult(refusal or "", is_error=True)), mutating=False)
        ctx = self._context.for_call(self._updater(record), call.id)
        mutates = getattr(tool, "mutates", None)  # a tool whose calls differ (lsp: a rename)
        mutating = tool.mutating or (mutates is not None and bool(mutates(call.arguments)))
        barrier = schedule.barrier(mutating=mutating)
        return schedule.add(self._execute(tool, call, ctx, barrier), mutating=mutating)

    async def _preflight(
        self, call: ToolCall, tool: Tool | None, refused: list[tuple[ToolCall, str]]
    ) -> str | None:
        """Why the call may not run (the text the model reads), or None: an unknown tool,
        invalid arguments, a ``pre_tool`` hook that blocks it, the authorizer's refusal."""
        if tool is None:
            known = ", ".join(sorted(self._toolset.by_name))
            return f"Unknown tool {call.name!r}. Available tools: {known}."
        if call.parse_error:
            return (
                f"The arguments of this {call.name} call are not a valid JSON object "
                f"({call.parse_error}). Call the tool again with valid JSON arguments."
            )
        blocked = await pre_tool(self._hooks, call)
        if blocked is not None:
            return blocked
        refusal = await self._authorize(call, tool)
        if refusal is not None:
            refused.append((call, refusal))
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
        result = await self._run_tool(tool, call.arguments, ctx)
        return await self._post_tool(call, result, ctx)

    async def _post_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        """The ``post_tool`` hooks of ``call``. What they change on disk (a formatter) is
        watched like a bash command and recorded as the run's change: a rewind restores it,
        and does not take it for a change made outside agentd."""
        if ctx.changes is None or not self._hooks.wants("post_tool", call.name):
            return await post_tool(self._hooks, call, result)
        async with ctx.changes.watching():
            return await post_tool(self._hooks, call, result)

    def _updater(self, record: _CallRecord) -> Callable[[str], None]:
        tool_call_id = record.call.id

        def on_update(delta: str) -> None:
            record.heard(delta)
            self._sink(ToolExecutionUpdate(tool_call_id=tool_call_id, output=delta))

        return on_update

    def _finish(self, record: _CallRecord, result: ToolResult) -> ToolResultMessage:
        record.ended = True
        call = record.call
        message = tool_result_message(call, result)
        for event in result.events:
            self._sink(event)
        self._sink(
            ToolExecutionEnd(
                tool_call_id=call.id,
                name=call.name,
                result=message.content,
                is_error=message.is_error,
                details=message.details,
            )
        )
        return message


CUT_OFF = (
    "The reply was cut off at the output token limit (max_tokens) before this call's "
    "arguments were complete, so it was not run. Call the tool again; if its arguments are "
    "long (a big file), split the work into smaller calls."
)
"""The result of each call of a reply that stopped at the output token limit."""

KEPT_OUTPUT_CHARS = 16_000
"""Characters of a cancelled call's streamed output kept in its result (the end of it)."""
_CANCELLED = ToolResult(
    "cancelled: the run was cancelled before this tool call finished", is_error=True
)


async def _ready(result: ToolResult) -> ToolResult:
    return result
