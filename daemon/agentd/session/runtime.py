"""A loaded session: its agent, event bus, session file, approver, compaction and current run.

The runtime is the agent's event sink: each event is numbered and fanned out by the
:class:`EventBus`, and completed messages are appended to the session file (flushed per
entry, fsynced in a worker thread at every turn end and after a run's last entry; a run's
result does not wait for that fsync).
It outlives the subscribers that watch it: a client that disconnects mid-run does not stop the
run. Every change to the conversation (branch, compaction, notes, model) goes through a runtime
method, which keeps the agent's messages and the file in step.

Each fact of the session's state lives in one place that the rest reads: the provider and
model in the agent (``agent.provider``, whose ``name`` is the provider reported, and
``agent.model``), the permission mode in the permission policy (``policy.mode``, which the
approver and the tools read too), and what the session is doing, with the handle of its
run, in :attr:`SessionRuntime.run` (a :class:`~agentd.session.phase.RunState`).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import msgspec
import structlog

from agentd.agent.hooks import NO_HOOKS
from agentd.agent.loop import Agent, CompactReason, RunResult
from agentd.agent.run import RunRequest
from agentd.agent.scheduling import SinkFailed
from agentd.errors import InvalidParams, SessionIdle, StoreWriteFailed
from agentd.log import get_logger
from agentd.permissions.policy import unsandboxed_auto
from agentd.protocol.content import Message
from agentd.protocol.events import (
    AgentEnd,
    Event,
    HookResult,
    MessageEnd,
    PlanUpdate,
    SessionWarning,
    SettingsChanged,
    ToolExecutionEnd,
    TurnEnd,
)
from agentd.protocol.hooks import HookInput
from agentd.protocol.methods import (
    CancelResult,
    CompactResult,
    HookBlock,
    PermissionMode,
    SessionInfo,
    SessionStateResult,
)
from agentd.protocol.session_file import (
    HookEntry,
    ModelChangeEntry,
    RewindEntry,
    SessionInfoEntry,
    SettingsEntry,
)
from agentd.session.compaction import Compactor, Reason, prompt_too_large
from agentd.session.history import hook_blocks
from agentd.session.phase import RunState
from agentd.session.questions import Questioner
from agentd.session.settings import RuntimeParts
from agentd.session.stream_redact import StreamRedactor
from agentd.session.syncing import SyncQueue

if TYPE_CHECKING:
    from agentd.agent.run import ModelBinding
    from agentd.config.load import Config

log = get_logger("agentd.session")


class SessionRuntime:
    """One loaded session. All methods run on the daemon's event loop."""

    def __init__(self, parts: RuntimeParts) -> None:
        """Store ``parts`` (built in dependency order, see :class:`RuntimeParts`) and build
        what needs this runtime as its sink: the compactor, the hooks, the extra tools, the
        fsync queue and the agent."""
        self.settings, self.file, self.policy = parts.settings, parts.file, parts.policy
        self.bus, self.approver, self.changes = parts.bus, parts.approver, parts.changes
        self.config: Config = parts.config
        """The configuration the session was built from (its subagents start from it)."""
        self.stream_redactor = StreamRedactor(self.file.redact_text, self.file.held_from)
        self.compactor = Compactor(parts.compaction, self.file, self.emit)
        self.run = RunState(self.settings.session_id)
        self.store_error: str | None = None
        self._syncs = SyncQueue(lambda: self.file.sync(), self._sync_failed)
        self._model_source = parts.model_source
        self.children: dict[str, SessionRuntime] = {}
        """The subagents' sessions running now for this session's task calls, by id."""
        made = parts.agent
        port = made.context.ports.questions
        self.questions = port if isinstance(port, Questioner) else None
        """Questions to the users behind the session's clients (None: it cannot ask)."""
        self.hooks = made.hooks(self.emit) if made.hooks is not None else None
        self.extra_tools = made.extra_tools(self.extra_warn) if made.extra_tools else None
        self.agent = Agent(
            provider=made.provider, model=made.model, system_prompt=made.system_prompt,
            toolset=made.toolset, context=made.context, sink=self.emit,
            authorize=self.approver, run_tool=made.run_tool, messages=made.messages,
            max_turns=made.max_turns, transform_context=self._compacted_context,
            tool_source=self.extra_tools, hooks=self.hooks or NO_HOOKS,
            settle=self._settle_changes,
        )  # fmt: skip

    def extra_warn(self, text: str) -> None:
        """A warning about the session's extra tools (an MCP server that is not available)."""
        self.emit(SessionWarning(message=text))

    @property
    def id(self) -> str:
        return self.settings.session_id

    @property
    def running(self) -> bool:
        """The session is busy: a run (from ``start_run`` until its ``agent_end``: a client
        may prompt again as soon as it sees that) or a compaction."""
        return self.run.busy

    def info(self) -> SessionInfo:
        """The session as ``session/new``, ``session/load`` and ``session/list`` report it."""
        s = self.settings
        return SessionInfo(
            session_id=s.session_id,
            cwd=s.cwd,
            provider=self.agent.provider.name,
            model=self.agent.model,
            permission_mode=self.policy.mode,
            title=s.title,
            path=str(self.file.path),
            warnings=[warning.message for warning in self.file.warnings],
            untrusted_config=s.untrusted_config,
            parent_session_id=self.file.header.parent_session_id,
            parent_tool_call_id=self.file.header.parent_tool_call_id,
        )

    def state(self) -> SessionStateResult:
        """``session/state``: what the session is doing, its model (while a run with a model
        of its own runs, a custom command's: that run's), queues and usage."""
        current = self.agent.current_model()
        return SessionStateResult(
            session_id=self.id,
            status="running" if self.running else "idle",
            phase=self.run.phase,
            provider=current.provider.name,
            model=current.model,
            permission_mode=self.policy.mode,
            steering=list(self.agent.queues.steering),
            follow_up=list(self.agent.queues.follow_up),
            usage=self.file.usage(),
            message_count=len(self.agent.messages),
            title=self.settings.title,
            plan=self.file.plan(),
        )

    def messages(self) -> list[Message]:
        """The conversation on the current branch (a copy)."""
        return list(self.agent.messages)

    def hook_blocks(self) -> list[HookBlock]:
        """The hooks that blocked something on the current branch, placed after their
        messages (:func:`agentd.session.history.hook_blocks`)."""
        if not self.file.hook_block_count:  # no walk of the branch for most sessions
            return []
        return hook_blocks(self.file.path_to_leaf(), self.file.redact_text)

    # --- the event sink ----------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        """Number and broadcast ``event``; persist completed messages.

        A failed write (a full disk: :class:`StoreWriteFailed`) is reported once, as a
        ``session_warning``. Inside a run the sink then raises :class:`SinkFailed` (it never
        cancels the run): the agent ends the run, nothing more of it is written, and its
        ``agent_end`` (preceded by an ``error`` event, code ``store_error``) says why.
        Outside a run the error goes to the caller.
        """
        if self.store_error is None:
            try:
                if isinstance(event, MessageEnd):
                    self.file.append_message(event.message)
                elif isinstance(event, PlanUpdate):
                    self.file.append_plan(event.entries)
                elif isinstance(event, HookResult):
                    self.file.append(HookEntry(hook=event))
                elif isinstance(event, ToolExecutionEnd | AgentEnd):
                    self.changes.write_pending(self.file)
                elif isinstance(event, TurnEnd):
                    self._syncs.request()
            except StoreWriteFailed as exc:
                self._write_failed(exc)
        for released in self.stream_redactor.events(event):
            self.bus.publish(released)

    async def _settle_changes(self) -> None:
        """The agent's ``settle``: wait (without holding the event loop) until the run's
        changed files are recorded, and write them before its ``agent_end``."""
        await self.changes.settled()
        try:
            self.changes.write_pending(self.file)
        except StoreWriteFailed as exc:
            self._write_failed(exc)

    def _write_failed(self, exc: StoreWriteFailed) -> NoReturn:
        """Warn; inside a run raise :class:`SinkFailed`, else resync and re-raise ``exc``."""
        self._warn(exc)
        if self.run.task is None:
            self._resync()
            raise exc
        self.store_error = exc.message
        raise SinkFailed(exc.message, "store_error") from None

    def _sync_failed(self, exc: StoreWriteFailed) -> None:
        """A failed fsync (they run in a worker thread, :class:`SyncQueue`) ends the run in
        progress through the agent (:meth:`Agent.abort`); with none, the conversation is
        resynced with the file."""
        if self.store_error is not None:
            return
        self._warn(exc)
        if self.agent.abort(SinkFailed(exc.message, "store_error")):
            self.store_error = exc.message
        else:
            self._resync()

    def _warn(self, exc: StoreWriteFailed) -> None:
        log.warning("session write failed", session_id=self.id, error=exc.message)
        self.bus.publish(SessionWarning(message=exc.message))

    def _resync(self) -> None:
        """After a failed write: the conversation is again what the file holds (calls left
        without a result get one, when the disk takes it). Only while the loop is not
        running."""
        with contextlib.suppress(StoreWriteFailed):
            self.file.repair_interrupted()
        self.agent.adopt(self.file.messages())

    # --- runs --------------------------------------------------------------------------------

    def start_run(self, request: RunRequest) -> asyncio.Task[RunResult]:
        """Start the run ``request`` asks for (taken as is by the agent: its model, caps and
        parent ledger); SessionBusy unless idle, ConfigError if a cost cap meets unknown
        prices, PromptTooLarge for a prompt the model's context cannot hold. No await:
        nothing runs between the busy check and the start."""
        self.run.check_idle("prompt")
        agent = self.agent
        agent.budget_of(request)  # a cost cap without prices fails here, not in the run
        model = agent.binding_of(request).model
        too_large = prompt_too_large(
            agent.system_prompt, agent.toolset.specs, model, request.text, self.compactor.settings
        )
        if too_large is not None:
            raise too_large
        task = asyncio.create_task(self._run(request), name=f"run-{self.id}")
        self.run.start(task)
        return task

    def enqueue(self, text: str, *, steer: bool) -> None:
        """Queue a steering or follow-up message for the running run; SessionIdle if none."""
        if self.run.task is None:
            raise SessionIdle(
                f"session {self.id} is not running; send the text with session/prompt"
            )
        self.agent.enqueue(text, steer=steer)

    async def add_note(self, text: str) -> None:
        """Record ``text`` as a user message without a run; SessionBusy unless idle.

        The message is broadcast at once and on disk when this returns (fsynced through the
        sync queue); the model reads it on the next run.
        """
        self.run.check_idle("note")
        self.agent.note(text)
        await self.durable()

    async def durable(self) -> None:
        """Until what was written to the session file is on disk (its fsync runs in the sync
        queue's worker thread, after those asked before); StoreWriteFailed when it fails."""
        await self._syncs.flush()

    async def _run(self, request: RunRequest) -> RunResult:
        self.run.begun()
        self.changes.new_run()
        structlog.contextvars.bind_contextvars(session_id=self.id)
        try:
            result = await self.agent.run(request)
        finally:
            with contextlib.suppress(StoreWriteFailed):  # those of a run its settle missed
                self.changes.write_pending(self.file)
            self.run.ended(asyncio.current_task())
        # Every entry of the run is written (appends are synchronous writes); the last fsync
        # runs in a worker thread and the answer does not wait for it: a failure of it comes
        # as a session_warning (see _sync_failed).
        self._syncs.request()
        if self.store_error is not None:
            self.store_error = None
            self._resync()
        if result.failure is not None:
            log.error("run failed", exc_info=result.failure)
        return result

    def cancel(self) -> CancelResult:
        """Stop the current run (if any) and drop the queued messages."""
        dropped = self.agent.drop_queues()
        return CancelResult(cancelled=self.run.cancel(), dropped=dropped)

    async def settled(self) -> None:
        """Wait until the current run (if any) has ended."""
        await self.run.settled()

    # --- changes to the conversation and the settings ----------------------------------------

    def branch(self, entry_id: str | None) -> None:
        """Continue from ``entry_id`` (None: from the start); SessionBusy unless idle."""
        self.run.check_idle("branch")
        self.file.branch(entry_id)
        self.agent.adopt(self.file.messages())

    async def rewound(self, parent_id: str | None, entry: RewindEntry) -> None:
        """``session/rewind`` moved the conversation: continue from ``parent_id`` with
        ``entry`` recorded there (on disk when this returns). The caller holds the
        ``rewinding`` phase."""
        self.file.branch(parent_id)
        self.file.append(entry)
        await self.durable()
        self.agent.adopt(self.file.messages())

    def rename(self, title: str) -> None:
        """Set the session's title (recorded in the file)."""
        self.file.append(SessionInfoEntry(title=title))
        self.settings = msgspec.structs.replace(self.settings, title=title)

    def fork(self, root: Path, entry_id: str | None, new_id: str | None) -> Path:
        """Copy the branch up to ``entry_id`` into a new session file; return its path."""
        forked = self.file.fork(root, entry_id, session_id=new_id)
        forked.close()
        return forked.path

    def use_model(
        self, binding: ModelBinding, *, provider_env: dict[str, str] | None, base_url: str | None
    ) -> None:
        """Call ``binding`` from the next LLM call on (recorded in the file under its
        provider's name; a changed ``base_url`` in the session's settings too), with the
        client's ``provider_env``."""
        self.agent.bind(binding)
        self._model_source = None
        self.file.append(ModelChangeEntry(provider=binding.provider.name, model=binding.model))
        if base_url != self.settings.base_url:
            saved = self.file.settings() or SettingsEntry()
            self.file.append(msgspec.structs.replace(saved, id="", base_url=base_url))
        self.settings = msgspec.structs.replace(
            self.settings, provider_env=provider_env, base_url=base_url
        )
        self._settings_changed()

    async def ensure_model(self) -> None:
        """Build the session's provider if it was loaded without one; ConfigError (what to
        set) when it cannot be built — the session stays loaded and readable."""
        source = self._model_source
        if source is None:
            return
        agent = self.agent
        resolved = await source(agent.provider.name, agent.model, self.settings.provider_env)
        if self._model_source is not source:  # setModel won meanwhile
            return
        agent.bind(resolved)
        self.compactor.learn_context_window(resolved.context_window)
        self._model_source = None

    async def _compacted_context(
        self, messages: list[Message], reason: CompactReason
    ) -> list[Message] | None:
        """The agent's context transform: on overflow, or on threshold when the context is
        large, the compacted context for the loop to adopt (None: keep it)."""
        if reason == "threshold" and not self.compactor.settings.over_threshold(messages):
            return None
        with self.run.during("compacting"):
            _, context = await self._compact(messages, reason)
        return context

    async def compact(self, reason: Reason, instructions: str | None = None) -> CompactResult:
        """Summarise everything before the cut now (SessionBusy unless idle); emits
        compaction_start/compaction_end."""
        self.run.check_idle("compact")
        with self.run.during("compacting"):
            result, context = await self._compact(self.agent.messages, reason, instructions)
        if context is not None:
            self.agent.adopt(context)
        return result

    async def _compact(
        self, messages: list[Message], reason: Reason, instructions: str | None = None
    ) -> tuple[CompactResult, list[Message] | None]:
        """Compact ``messages`` (the ``pre_compact`` hooks first: they are told, they cannot
        stop it)."""
        current = self.agent.current_model()  # a command's run compacts on its model
        if self.hooks is not None and self.hooks.wants("pre_compact"):
            await self.hooks.fire(HookInput(event="pre_compact"))
        try:
            return await self.compactor.compact(
                current.provider, current.model, messages, reason, instructions
            )
        except StoreWriteFailed as exc:
            self._write_failed(exc)

    async def set_permission_mode(self, mode: PermissionMode) -> None:
        """Apply ``mode`` to the next tool calls, record it in the session file (on disk when
        this returns) and tell the subscribers (``settings_changed``); InvalidParams for
        ``auto`` in a session without the sandbox (unless opted in)."""
        policy = self.policy
        sandboxed = policy.workspace is not None
        problem = unsandboxed_auto(
            mode, sandboxed=sandboxed, allowed=policy.allow_auto_without_sandbox
        )
        if problem is not None:
            raise InvalidParams(problem)
        self.policy.switch_mode(mode)
        saved = self.file.settings() or SettingsEntry()
        self.file.append(msgspec.structs.replace(saved, id="", permission_mode=mode))
        self._settings_changed()
        await self.durable()

    def _settings_changed(self) -> None:
        """Tell the subscribers the session's model and permission mode now."""
        agent = self.agent
        mode = self.policy.mode
        self.emit(
            SettingsChanged(provider=agent.provider.name, model=agent.model, permission_mode=mode)
        )

    async def shutdown(self) -> None:
        """Cancel a running run, wait for it to settle, and close the session file."""
        task = self.run.task
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self._syncs.wait()
        if self.extra_tools is not None:
            await self.extra_tools.close()
        self.file.close()
