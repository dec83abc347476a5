"""A loaded session: its agent, event bus, session file, approver, compaction and current run.

Its parts are built once, in dependency order, by :mod:`agentd.session.assembly`; the
constructor only stores them. Events go through the session's sink
(:class:`~agentd.session.sink.SessionSink`: numbered, fanned out, completed records written).
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
from typing import TYPE_CHECKING

import msgspec

from agentd.agent.loop import RunResult
from agentd.agent.run import RunRequest
from agentd.agent.scheduling import SinkFailed
from agentd.errors import InvalidParams, SessionIdle, StoreWriteFailed
from agentd.log import bind_context, get_logger
from agentd.permissions.policy import unsandboxed_auto
from agentd.protocol.content import Message
from agentd.protocol.events import Event, SettingsChanged
from agentd.protocol.methods import (
    CancelResult,
    CompactResult,
    HookBlock,
    PermissionMode,
    SessionInfo,
    SessionStateResult,
)
from agentd.protocol.session_file import (
    ModelChangeEntry,
    RewindEntry,
    SessionInfoEntry,
    SettingsEntry,
)
from agentd.session.compaction import Reason, prompt_too_large
from agentd.session.history import hook_blocks
from agentd.session.questions import Questioner
from agentd.session.settings import RuntimeParts

if TYPE_CHECKING:
    from agentd.agent.run import ModelBinding
    from agentd.config.load import Config

log = get_logger("agentd.session")


class SessionRuntime:
    """One loaded session. All methods run on the daemon's event loop."""

    def __init__(self, parts: RuntimeParts) -> None:
        """Store ``parts`` (built in dependency order, see :class:`RuntimeParts`)."""
        self.settings, self.file, self.policy = parts.settings, parts.file, parts.policy
        self.bus, self.approver, self.changes = parts.bus, parts.approver, parts.changes
        self.config: Config = parts.config
        """The configuration the session was built from (its subagents start from it)."""
        self.run, self.sink, self.compaction = parts.run, parts.sink, parts.compaction
        self.hooks, self.extra_tools, self.agent = parts.hooks, parts.extra_tools, parts.agent
        self._model_source = parts.model_source
        self.children: dict[str, SessionRuntime] = {}
        """The subagents' sessions running now for this session's task calls, by id."""
        self.processes = self.agent.context.processes
        """The session's background processes (they end with :meth:`shutdown`)."""
        if self.processes is not None:
            self.processes.emit = self._process_event
        port = self.agent.context.ports.questions
        self.questions = port if isinstance(port, Questioner) else None
        """Questions to the users behind the session's clients (None: it cannot ask)."""

    def emit(self, event: Event) -> None:
        """Send ``event`` through the session's sink (:meth:`SessionSink.emit`)."""
        self.sink.emit(event)

    def _process_event(self, event: Event) -> None:
        """A background process's event (outside any tool call): emitted; a failed write of
        the changes it made is the sink's session warning, not an error here."""
        with contextlib.suppress(StoreWriteFailed, SinkFailed):
            self.sink.emit(event)

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
            processes=self.processes.infos(live_only=True) if self.processes else [],
        )

    def messages(self) -> list[Message]:
        """The conversation on the current branch (a copy)."""
        return list(self.agent.messages)

    def hook_blocks(self) -> list[HookBlock]:
        """The hooks that blocked something on the current branch, placed after their
        messages (:func:`agentd.session.history.hook_blocks`)."""
        if not self.file.hook_block_count:  # no walk of the branch for most sessions
            return []
        return hook_blocks(self.file.outline(), self.file.redact_text)

    # --- runs --------------------------------------------------------------------------------

    def start_run(
        self, request: RunRequest, trace_parent: str | None = None
    ) -> asyncio.Task[RunResult]:
        """Start the run ``request`` asks for (taken as is by the agent: its model, caps and
        parent ledger); SessionBusy unless idle, ConfigError if a cost cap meets unknown
        prices, PromptTooLarge for a prompt the model's context cannot hold. No await:
        nothing runs between the busy check and the start. ``trace_parent``: the W3C
        ``traceparent`` the run's telemetry span is a child of (None: none)."""
        self.run.check_idle("prompt")
        agent = self.agent
        agent.budget_of(request)  # a cost cap without prices fails here, not in the run
        binding = agent.binding_of(request)
        model = binding.model
        settings = self.compaction.compactor.settings
        too_large = prompt_too_large(
            agent.system_prompt, agent.toolset.specs, model, request.text, settings
        )
        if too_large is not None:
            raise too_large
        self.bus.scope.run_starts(binding.provider.name, model, trace_parent)
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
        await self.sink.durable()

    async def _run(self, request: RunRequest) -> RunResult:
        self.run.begun()
        self.changes.new_run()
        bind_context(session_id=self.id)
        try:
            result = await self.agent.run(request)
        finally:
            self.sink.run_ended()  # the records its settle missed; the last fsync asked for
            self.run.ended(asyncio.current_task())
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

    async def branch(self, entry_id: str | None) -> None:
        """Continue from ``entry_id`` (None: from the start); SessionBusy unless idle (also
        when a run started while the branch's context was read: in a worker thread, since a
        big branch takes a while to decode), InvalidParams for an unknown id."""
        self.run.check_idle("branch")
        if entry_id is not None and not self.file.has_entry(entry_id):
            raise InvalidParams(f"session {self.id!r} has no entry {entry_id!r}")
        context = await asyncio.to_thread(self.file.messages_at, entry_id)
        self.run.check_idle("branch")
        self.file.branch(entry_id)
        self.agent.adopt(context)

    async def rewound(self, parent_id: str | None, entry: RewindEntry) -> None:
        """``session/rewind`` moved the conversation: continue from ``parent_id`` with
        ``entry`` recorded there (on disk when this returns). The caller holds the
        ``rewinding`` phase; the new context is decoded in a worker thread."""
        context = await asyncio.to_thread(self.file.messages_at, parent_id)
        self.file.branch(parent_id)
        self.file.append(entry)
        await self.durable()
        self.agent.adopt(context)

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
        self.compaction.compactor.learn_context_window(resolved.context_window)
        self._model_source = None

    async def compact(self, reason: Reason, instructions: str | None = None) -> CompactResult:
        """Summarise everything before the cut now (SessionBusy unless idle); emits
        compaction_start/compaction_end."""
        self.run.check_idle("compact")
        agent = self.agent
        with self.run.during("compacting"):  # a command's run compacts on its model
            result, context = await self.compaction.compact(
                agent.messages, agent.current_model(), reason, instructions
            )
        if context is not None:
            self.agent.adopt(context)
        return result

    async def set_permission_mode(self, mode: PermissionMode) -> None:
        """Apply ``mode`` to the next tool calls, record it in the session file (on disk when
        this returns) and tell the subscribers (``settings_changed``); InvalidParams for
        ``auto`` in a session without the sandbox (unless opted in)."""
        policy = self.policy
        sandboxed = policy.workspace is not None
        problem = unsandboxed_auto(
            mode,
            sandboxed=sandboxed,
            allowed=policy.allow_auto_without_sandbox,
            config_file=policy.config_file,
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
        """Cancel a running run, wait for it to settle, end the background processes, and
        close the session file."""
        task = self.run.task
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self.processes is not None:
            await self.processes.close(self.agent.context.settings.bash_kill_grace)
        await self.sink.close()
        if self.extra_tools is not None:
            await self.extra_tools.close()
        self.file.close()
