"""The agent loop: prompt → stream the assistant → run its tool calls → repeat.

:meth:`Agent.run` is the whole loop, and :meth:`Agent._loop` reads as its pseudocode. The
agent emits every event through one synchronous sink and never touches the transport or the
disk itself (the session runtime persists ``message_end`` events and fans events out).

An :class:`Agent` holds a session's configuration and conversation; one run's own state (its
result, open turn, limits) is an :class:`~agentd.agent.runstate.ActiveRun` made by :meth:`run`.

Contracts:

- exactly one ``agent_start`` first and one ``agent_end`` last per run, also on error and cancel;
- every turn that starts ends (``turn_end``; stop reason ``aborted`` when cancelled);
- an assistant message with tool calls always gets one tool result per call, in the order the
  model issued them (synthetic "cancelled" results if the run is cancelled mid-tool);
- steering messages are delivered after the current tool calls, before the next LLM call;
  follow-up messages when the agent would otherwise stop; a cancel drops both queues;
- cancelling the task running :meth:`run` ends it promptly with stop reason ``cancelled``: the
  HTTP stream is closed and running tools are cancelled;
- tool-call ids are unique within the session (:mod:`agentd.agent.callids`);
- the loop owns the conversation while it runs: a compaction is a :data:`ContextTransform`
  that returns the new context, which the loop adopts; nothing else rewrites
  :attr:`Agent.messages` during a run;
- the sink only reports: when it cannot take the run's events it raises
  :class:`~agentd.agent.scheduling.SinkFailed` and the run ends (stop reason ``error``); a
  failure found outside the loop (a failed fsync) ends it through :meth:`Agent.abort`;
- the tool calls of a reply cut off at the output token limit (stop reason ``length``) are
  not run: each gets an error result telling the model to call again;
- hooks (:mod:`agentd.agent.hooks`) see the prompt before it joins the conversation (a block
  ends the run with stop reason ``blocked`` before any model call; their context is added to
  the prompt), each tool call before and after it runs, and the run's end before
  ``agent_end``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import msgspec

from agentd.agent.budget import Budget, Ledger
from agentd.agent.callids import ReplyCallIds
from agentd.agent.hooks import NO_HOOKS, RunHooks, prompt_hooks, with_context
from agentd.agent.messages import new_id, usable, user_message
from agentd.agent.ports import CompactReason, ContextTransform, ToolSource
from agentd.agent.reply import cut_short_reply, estimated_usage, stream_reply
from agentd.agent.run import ModelBinding, RunRequest
from agentd.agent.runstate import ActiveRun, RunResult, Stop, end_events, run_budget
from agentd.agent.scheduling import (
    Authorizer,
    EventSink,
    MessageQueues,
    SinkFailed,
    ToolRound,
    ToolRunner,
)
from agentd.protocol.content import (
    AssistantMessage,
    Message,
    StopReason,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from agentd.protocol.events import (
    AgentStart,
    MessageEnd,
    MessageStart,
    TurnEnd,
    TurnStart,
)
from agentd.protocol.hooks import HookInput
from agentd.providers.base import Provider, ProviderRequest, StreamEnd
from agentd.tools.base import ToolContext, Toolset
from agentd.tools.skill import STATE as SKILL_STATE
from agentd.tools.web_search import offered_specs

__all__ = ["Agent", "CompactReason", "ContextTransform", "RunResult", "ToolSource"]


class Agent:
    """One session's configuration and conversation, and the loop that extends it (built
    with keyword arguments).

    ``messages`` is the conversation: during a run only the loop changes it (it grows, and
    a compaction's new list from ``transform_context`` replaces it); between runs its owner
    may replace it (a branch, a manual compaction). ``toolset`` the tools by name with the
    specs the model sees; ``run_tool`` runs one decoded call (validation and ToolError
    handling live there); ``queues`` the steering and follow-up texts; ``hooks`` the user's
    commands at the run's seams (:mod:`agentd.agent.hooks`); ``settle`` is awaited after the
    ``stop`` hooks, before ``agent_end``: the owner finishes what the run left pending (the
    session's records of changed files), and may raise ``SinkFailed``.
    """

    def __init__(
        self,
        *,
        provider: Provider,
        model: str,
        system_prompt: str,
        toolset: Toolset,
        context: ToolContext,
        sink: EventSink,
        authorize: Authorizer,
        run_tool: ToolRunner,
        messages: list[Message] | None = None,
        max_turns: int = 50,
        transform_context: ContextTransform | None = None,
        tool_source: ToolSource | None = None,
        hooks: RunHooks = NO_HOOKS,
        settle: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.provider, self.model, self.system_prompt = provider, model, system_prompt
        self.toolset, self.context, self.sink = toolset, context, sink
        self.authorize, self.run_tool = authorize, run_tool
        self.messages: list[Message] = [] if messages is None else messages
        self.max_turns, self.transform_context = max_turns, transform_context
        self.tool_source, self.hooks, self.settle = tool_source, hooks, settle
        self.queues = MessageQueues(lambda update: self.sink(update))
        self._active: ActiveRun | None = None

    def binding_of(self, request: RunRequest) -> ModelBinding:
        """The model ``request`` runs on: its own, else the session's."""
        return request.model or ModelBinding(self.provider, self.model)

    def budget_of(self, request: RunRequest) -> Budget | None:
        """The caps of ``request`` (:func:`~agentd.agent.runstate.run_budget`; the caller
        checks them before the run: :meth:`run` raises their ConfigError before
        ``agent_start``)."""
        return run_budget(request, self.binding_of(request))

    async def run(self, request: RunRequest) -> RunResult:
        """Run the agent on ``request`` until it stops; never raises for provider/tool failures
        (a failed run ends with an ``error`` event, then ``agent_end``).

        The run calls ``request.model`` when it has one (else the session's provider and
        model); ``max_turns`` limits this run only (default: :attr:`max_turns`); its caps stop
        it (stop reason ``budget``) before the model call that would pass one; the usage of a
        run with a ``parent`` ledger counts there too and the parent's caps apply here
        (:class:`~agentd.agent.budget.Ledger`). ``command``: the custom command the user
        typed, ``text`` being its expansion (kept on the user message).
        """
        ledger = Ledger(self.budget_of(request), request.parent)
        binding = self.binding_of(request)
        max_turns = request.max_turns or self.max_turns
        run = ActiveRun(max_turns, ledger, binding, task=asyncio.current_task())
        self._active = run
        self.context.state.pop(SKILL_STATE, None)  # a new run follows no skill yet
        try:
            self.sink(AgentStart())
            prompt = await self._hooked_prompt(request.text, request.images, request.command)
            if self.tool_source is not None:
                self.toolset = await self.tool_source.prepare()
            await self._loop(run, [prompt])
        except Stop as stop:
            run.result.stop_reason, run.result.error = stop.reason, stop.error
        except SinkFailed as failed:
            self._failed(run, failed)
        except asyncio.CancelledError:
            self._cancelled(run)
        except Exception as exc:  # a bug must still end the run cleanly (logged by the caller)
            run.result.stop_reason, run.result.error = "error", f"internal error: {exc!r}"
            run.result.failure = exc
        finally:
            self._active = None
            run.release()
        await self._stop_hooks(run)
        await self._settle(run)
        run.result.usage = ledger.usage  # its subagents' spending included
        self._end(run.result)
        return run.result

    async def _hooked_prompt(
        self, text: str, images: list[UserContent] | None, command: str | None = None
    ) -> UserMessage:
        """The prompt as the model will read it, with the hooks' context; a hook's block ends
        the run (stop reason ``blocked``) before it joins the conversation. ``command``: the
        custom command typed (``text`` is its expansion, which the hooks see)."""
        verdict = await prompt_hooks(self.hooks, text)
        if verdict.blocked is not None:
            raise Stop("blocked", f"blocked by a hook: {verdict.blocked}")
        return with_context(user_message(text, images, command), verdict.context)

    async def _stop_hooks(self, run: ActiveRun) -> None:
        """The ``stop`` hooks, told how the run ended (their answer changes nothing). A cancel
        meanwhile ends them, not the report of the run."""
        if self.hooks.wants("stop"):
            stop = HookInput(event="stop", stop_reason=run.result.stop_reason)
            await self._finish(run, self.hooks.fire(stop))

    async def _settle(self, run: ActiveRun) -> None:
        """:attr:`settle`, shielded from a cancel (the run's records must not be cut short)."""
        if self.settle is not None:
            await self._finish(run, asyncio.shield(self.settle()))

    async def _finish(self, run: ActiveRun, step: Awaitable[object]) -> None:
        """Await one step of a run's end: a cancel meanwhile is taken back (the run's report
        still follows), a failed sink fails the run."""
        try:
            await step
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        except SinkFailed as failed:
            self._failed(run, failed)

    def active_run(self) -> tuple[Ledger, int] | None:
        """The ledger and turn limit of the run in progress (None when idle): a subagent
        started by one of its tool calls spends into that ledger under that limit."""
        run = self._active
        return None if run is None else (run.ledger, run.max_turns)

    def current_model(self) -> ModelBinding:
        """The model called now: the running run's, else the session's."""
        run = self._active
        return ModelBinding(self.provider, self.model) if run is None else run.binding

    def abort(self, failure: SinkFailed) -> bool:
        """End the run in progress with ``failure`` (stop reason ``error``), for a failure found
        outside the loop (a failed fsync of the session file); False when none is running."""
        run = self._active
        if run is None or run.task is None or run.aborted is not None:
            return False
        run.aborted = failure
        run.task.cancel()
        return True

    async def _loop(self, run: ActiveRun, pending: list[UserMessage]) -> None:
        while True:
            self._check_limits(run, pending)
            await self._refresh_tools()
            self._start_turn(run, pending)
            await self._compact(run, "threshold")
            reply = await self._call_model(run)
            if reply.context_overflow and await self._compact(run, "overflow"):
                reply = await self._call_model(run)
            if reply.message.stop_reason in ("error", "aborted"):
                self._end_turn(run, reply.message.stop_reason)
                raise Stop("error", reply.message.error_message or "the model call failed")
            calls = reply.message.tool_calls()
            if calls:
                await self._run_tools(run, calls, cut_off=reply.message.stop_reason == "length")
            self._end_turn(run, reply.message.stop_reason)
            pending = [user_message(t) for t in self.queues.next_texts(tools_ran=bool(calls))]
            if not calls and not pending:
                return

    def _check_limits(self, run: ActiveRun, pending: list[UserMessage]) -> None:
        """Stop before a turn the run may not take: past ``max_turns``, or over its budget
        (the pending messages are kept in the session, though no model call follows)."""
        if run.result.turns >= run.max_turns:
            raise Stop("max_turns", f"stopped after {run.max_turns} turns (max turns)")
        refusal = run.ledger.capped and self._budget_refusal(run, pending)
        if refusal:
            for message in pending:
                self._add_user(message)
            raise Stop("budget", refusal)

    def _start_turn(self, run: ActiveRun, pending: list[UserMessage]) -> None:
        run.result.turns += 1
        run.open_turn = run.result.turns
        self.sink(TurnStart(turn=run.result.turns))
        for message in [*self._process_notes(), *pending]:
            self._add_user(message)

    def _process_notes(self) -> list[UserMessage]:
        """The background processes that ended since the model last looked, each told once,
        as a user message at the start of the turn."""
        processes = self.context.processes
        notes = processes.take_exit_notes() if processes is not None else []
        return [user_message("\n".join(notes))] if notes else []

    def _end_turn(self, run: ActiveRun, stop_reason: StopReason) -> None:
        turn, run.open_turn = run.open_turn, None
        if turn is not None:
            self.sink(TurnEnd(turn=turn, stop_reason=stop_reason))

    async def _refresh_tools(self) -> None:
        fresh = await self.tool_source.refresh() if self.tool_source is not None else None
        if fresh is not None:
            self.toolset = fresh

    async def _compact(self, run: ActiveRun, reason: CompactReason) -> bool:
        """Let ``transform_context`` compact the context; adopt what it returns (whether it
        did)."""
        if self.transform_context is None:
            return False
        context = await self.transform_context(list(self.messages), reason, run.binding)
        if context is None:
            return False
        self.messages = context
        return True

    def _cancelled(self, run: ActiveRun) -> None:
        """A cancel ends the run: the queues are dropped and the open turn ends. A cancel
        that :meth:`abort` sent ends it as that failure."""
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        if run.aborted is not None:
            self._failed(run, run.aborted)
            return
        run.result.stop_reason = "cancelled"
        self.drop_queues()
        self._end_turn(run, "aborted")

    def _failed(self, run: ActiveRun, failed: SinkFailed) -> None:
        """The sink cannot go on: the run ends with its error (queues dropped, the open turn
        ended), like a cancel the model never sees."""
        run.result.stop_reason, run.result.error = "error", failed.message
        run.result.error_code = failed.code
        self.drop_queues()
        self._end_turn(run, "aborted")

    def _end(self, result: RunResult) -> None:
        for event in end_events(result):
            self.sink(event)

    def _budget_refusal(self, run: ActiveRun, pending: list[UserMessage]) -> str | None:
        """Why the budget forbids the next model call (with ``pending`` added), or None."""
        context = [m for m in self.messages if usable(m)] + list(pending)
        return run.budget_refusal(context, self._preamble_tokens())

    def _preamble_tokens(self) -> int:
        """An estimate of what every call sends besides the messages (prompt, tool specs)."""
        return (len(self.system_prompt) + len(msgspec.json.encode(self.toolset.specs))) // 4

    # --- one assistant message ---------------------------------------------------------------

    async def _call_model(self, run: ActiveRun) -> StreamEnd:
        """Stream one reply and record it (``message_end``, the run's usage)."""
        message_id = new_id()
        request = ProviderRequest(
            model=run.binding.model,
            system_prompt=self.system_prompt,
            messages=[m for m in self.messages if usable(m)],
            tools=offered_specs(self.toolset.specs, self.context),
            message_id=message_id,
        )
        self.sink(MessageStart(message_id=message_id, role="assistant"))
        text: list[str] = []
        ids = ReplyCallIds(self.messages)
        try:
            end = await stream_reply(run, request, self.sink, text, ids)
        except asyncio.CancelledError:
            self._record(run, cut_short_reply(run, message_id, text, failed=False))
            run.spend(estimated_usage(run, request, text, self._preamble_tokens()))
            raise
        end = msgspec.structs.replace(end, message=ids.finish(end.message))
        end.message.id = message_id
        self._record(run, end.message)
        return end

    def _record(self, run: ActiveRun, message: AssistantMessage) -> None:
        self.messages.append(message)
        self.sink(MessageEnd(message=message))
        run.spend(message.usage)

    # --- tool calls --------------------------------------------------------------------------

    async def _run_tools(self, run: ActiveRun, calls: list[ToolCall], *, cut_off: bool) -> None:
        """Run one reply's tool calls (:class:`ToolRound`: approval in order, scheduling, one
        start and one end event per call whatever happens); their results join the
        conversation in the model's order. ``cut_off``: the reply stopped at the output token
        limit, so none runs (each gets an error result asking for the call again)."""
        round_ = ToolRound(
            self.toolset, self.context, self.sink, self.authorize, self.run_tool, self.hooks
        )
        await round_.run(
            calls, refused=run.result.refused, add_result=self._add_tool_result, cut_off=cut_off
        )

    def _add_tool_result(self, message: ToolResultMessage) -> None:
        self.messages.append(message)
        self.sink(MessageStart(message_id=message.id, role="tool_result"))
        self.sink(MessageEnd(message=message))

    # --- user messages and queues ------------------------------------------------------------

    def _add_user(self, message: UserMessage) -> None:
        self.messages.append(message)
        self.sink(MessageStart(message_id=message.id, role="user"))
        self.sink(MessageEnd(message=message))

    def adopt(self, messages: list[Message]) -> None:
        """Continue from ``messages`` (between runs only: a branch, a manual compaction, a
        rewind, a resync with the session file)."""
        self.messages = messages

    def bind(self, binding: ModelBinding) -> None:
        """Call ``binding`` from the next run on (``session/setModel``, a loaded session's
        model resolved at its first call)."""
        self.provider, self.model = binding.provider, binding.model

    def note(self, text: str) -> None:
        """Add ``text`` as a user message between runs, without calling the model.

        It is emitted (``message_start``, ``message_end``) like a prompt, and the model reads it
        as part of the conversation on the next run. Call it only while no run is in progress.
        """
        self._add_user(user_message(text))

    def enqueue(self, text: str, *, steer: bool) -> None:
        """Queue a steering (``steer``) or follow-up message for the running loop."""
        self.queues.enqueue(text, steer=steer)

    def drop_queues(self) -> list[str]:
        """Empty both queues; return the dropped texts (reported to the canceller)."""
        return self.queues.drop()
