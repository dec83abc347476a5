"""A loaded session: its agent, event bus, session file, approver, compaction and current run.

The runtime is the agent's event sink: each event is numbered and fanned out by the
:class:`EventBus`, and completed messages are appended to the session file (flushed per
entry, fsynced in a worker thread at every turn end and after a run's last entry; a run's
result does not wait for that fsync).
It outlives the subscribers that watch it: a client that disconnects mid-run does not stop the
run. Every change to the conversation (branch, compaction, notes, model) goes through a runtime
method, which keeps the agent's messages and the file in step.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import structlog

from agentd.agent.budget import Budget
from agentd.agent.loop import Agent, RunResult
from agentd.agent.messages import estimate_tokens
from agentd.errors import ConfigError, SessionBusy, SessionIdle, StoreWriteFailed
from agentd.log import get_logger
from agentd.protocol.content import ImageContent, Message, UserContent
from agentd.protocol.events import (
    AgentEnd,
    CompactionEnd,
    CompactionStart,
    ErrorEvent,
    Event,
    MessageEnd,
    SessionWarning,
    TurnEnd,
)
from agentd.protocol.methods import (
    CancelResult,
    CompactResult,
    PermissionMode,
    SessionInfo,
    SessionStateResult,
)
from agentd.protocol.session_file import ModelChangeEntry, SessionInfoEntry, SettingsEntry
from agentd.session.approval import Approver
from agentd.session.binding import ModelSource
from agentd.session.bus import EventBus
from agentd.session.compaction import (
    CompactionSettings,
    Reason,
    cut_index,
    prompt_too_large,
    summarise,
    summary_request,
)
from agentd.session.files import ClientFiles
from agentd.session.settings import AgentParts, Settings
from agentd.session.stream_redact import StreamRedactor
from agentd.session.syncing import SyncQueue

if TYPE_CHECKING:
    from agentd.permissions.policy import PermissionPolicy
    from agentd.providers.base import Provider
    from agentd.store import SessionFile

log = get_logger("agentd.session")


class SessionRuntime:
    """One loaded session. All methods run on the daemon's event loop."""

    def __init__(
        self,
        settings: Settings,
        file: SessionFile,
        policy: PermissionPolicy,
        parts: AgentParts,
        *,
        compaction: CompactionSettings,
        approval_timeout: float,
        model_source: ModelSource | None = None,
    ) -> None:
        """``model_source`` set: the provider in ``parts`` is a stand-in, resolved through it
        by :meth:`ensure_model` (see :mod:`agentd.session.binding`)."""
        self.settings = settings
        self.file = file
        self.policy = policy
        self.compaction = compaction
        self.bus = EventBus(settings.session_id, redact=file.redact_json)
        self.stream_redactor = StreamRedactor(file.redact_text, file.held_from)
        self.approver = Approver(policy, self.bus, approval_timeout)
        parts.context.files = ClientFiles(settings.session_id, self.bus.subscribers.values)
        self.agent = Agent(
            provider=parts.provider,
            model=settings.model,
            system_prompt=parts.system_prompt,
            toolset=parts.toolset,
            context=parts.context,
            sink=self.emit,
            authorize=self.approver,
            run_tool=parts.run_tool,
            messages=parts.messages,
            max_turns=parts.max_turns,
            compact=self.auto_compact,
        )
        self.run_task: asyncio.Task[RunResult] | None = None
        self.store_error: str | None = None
        self._syncs = SyncQueue(lambda: self.file.sync(), self._sync_failed)
        self._finishing = False
        self._run_begun = False
        self._model_source = model_source

    @property
    def id(self) -> str:
        return self.settings.session_id

    @property
    def running(self) -> bool:
        """A run is in progress: from ``start_run`` until its ``agent_end``. The flush to disk
        that follows does not count, so a client may prompt again as soon as it sees
        ``agent_end``."""
        return self.run_task is not None and not self.run_task.done() and not self._finishing

    def info(self) -> SessionInfo:
        return self.settings.info(self.file.path)

    def messages(self) -> list[Message]:
        """The conversation on the current branch (a copy)."""
        return list(self.agent.messages)

    # --- the event sink ----------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        """Number and broadcast ``event``; persist completed messages.

        A failed write (a full disk: :class:`StoreWriteFailed`) is reported once, as a
        ``session_warning``, and ends the run: nothing more of it is written, and its
        ``agent_end`` (preceded by an ``error`` event, code ``store_error``) says why.
        Outside a run the error goes to the caller.
        """
        if self.store_error is None:
            try:
                if isinstance(event, MessageEnd):
                    self.file.append_message(event.message)
                elif isinstance(event, TurnEnd):
                    self._syncs.request()
            except StoreWriteFailed as exc:
                self._write_failed(exc)
        if isinstance(event, AgentEnd) and self.store_error is not None:
            self.bus.publish(ErrorEvent(message=self.store_error, code="store_error"))
            event = msgspec.structs.replace(event, stop_reason="error", error=self.store_error)
        for released in self.stream_redactor.events(event):
            self.bus.publish(released)

    def _write_failed(self, exc: StoreWriteFailed) -> None:
        if not self._report(exc):
            raise exc

    def _report(self, exc: StoreWriteFailed) -> bool:
        """Warn about a failed write; end the run if one is going on (returns whether one
        was), else resync the conversation with the file."""
        log.warning("session write failed", session_id=self.id, error=exc.message)
        self.bus.publish(SessionWarning(message=exc.message))
        if not self.running or self.run_task is None or self._finishing:
            self._resync()
            return False
        self.store_error = exc.message
        self.run_task.cancel()
        return True

    def _sync_failed(self, exc: StoreWriteFailed) -> None:
        """A failed fsync (they run in a worker thread, :class:`SyncQueue`) is reported like a
        failed append."""
        if self.store_error is None:
            self._report(exc)

    def _resync(self) -> None:
        """After a failed write: the conversation is again what the file holds (calls left
        without a result get one, when the disk takes it)."""
        with contextlib.suppress(StoreWriteFailed):
            self.file.repair_interrupted()
        self.agent.messages = self.file.messages()

    # --- runs --------------------------------------------------------------------------------

    def start_run(
        self,
        text: str,
        images: list[ImageContent],
        max_turns: int | None = None,
        *,
        max_cost: float | None = None,
        max_tokens: int | None = None,
    ) -> asyncio.Task[RunResult]:
        """Start a run (``max_turns``: this run's limit; ``max_cost``, ``max_tokens``: its
        spending caps); SessionBusy if one is in progress, ConfigError if a cost cap meets
        unknown prices."""
        self._check_idle("prompt")
        budget = None
        if max_cost is not None or max_tokens is not None:
            budget = Budget(max_cost=max_cost, max_tokens=max_tokens)
        if budget is not None and budget.max_cost is not None:
            self._check_priced()
        too_large = prompt_too_large(
            self.agent.system_prompt,
            self.agent.toolset.specs,
            self.agent.model,
            text,
            self.compaction,
        )
        if too_large is not None:
            raise too_large
        content: list[UserContent] = list(images)
        run = self._run(text, content, max_turns, budget)
        task = asyncio.create_task(run, name=f"run-{self.id}")
        self.run_task, self._run_begun = task, False
        return task

    def enqueue(self, text: str, *, steer: bool) -> None:
        """Queue a steering or follow-up message for the running run; SessionIdle if none."""
        if not self.running:
            raise SessionIdle(
                f"session {self.id} is not running; send the text with session/prompt"
            )
        self.agent.enqueue(text, steer=steer)

    def add_note(self, text: str) -> None:
        """Record ``text`` as a user message without a run; SessionBusy if one is in progress.

        The message is persisted and broadcast at once; the model reads it on the next run.
        """
        self._check_idle("note")
        self.agent.note(text)
        self.file.sync()

    def _check_priced(self) -> None:
        model = self.agent.model
        if self.agent.provider.price_of(model) is None:
            raise ConfigError(
                f"a cost cap needs the prices of model {model!r}, which are unknown; add "
                f'[prices."{model}"] input = …, output = … (USD per million tokens) to the '
                "config file, or cap tokens instead"
            )

    def _check_idle(self, action: str) -> None:
        if not self.running:
            return
        if action in ("prompt", "note"):
            raise SessionBusy(
                f"session {self.id} is running; wait for it to finish, or use "
                "session/steer, session/followUp or session/cancel"
            )
        raise SessionBusy(f"session {self.id} is running; cannot {action} until it ends")

    async def _run(
        self,
        text: str,
        images: list[UserContent],
        max_turns: int | None,
        budget: Budget | None,
    ) -> RunResult:
        self._run_begun = True
        structlog.contextvars.bind_contextvars(session_id=self.id)
        self._finishing = False
        result = await self.agent.run(text, images, max_turns=max_turns, budget=budget)
        self._finishing = True  # a failure found from here on changes the result only
        # Every entry of the run is written (appends are synchronous writes); the last fsync
        # runs in a worker thread and the answer does not wait for it: a failure of it comes
        # as a session_warning (see _sync_failed).
        self._syncs.request()
        if self.store_error is not None:
            result.stop_reason, result.error = "error", self.store_error
            self.store_error = None
            self._resync()
        if result.failure is not None:
            log.error("run failed", exc_info=result.failure)
        return result

    def cancel(self) -> CancelResult:
        """Stop the current run (if any) and drop the queued messages."""
        dropped = self.agent.drop_queues()
        if not self.running or self.run_task is None:
            return CancelResult(cancelled=False, dropped=dropped)
        if self._run_begun:
            self.run_task.cancel()
        else:  # let the run begin first, so it still reports agent_start and agent_end
            asyncio.get_running_loop().call_soon(self.run_task.cancel)
        return CancelResult(cancelled=True, dropped=dropped)

    async def settled(self) -> None:
        """Wait until the current run (if any) has ended."""
        if self.run_task is not None:
            await asyncio.gather(self.run_task, return_exceptions=True)

    # --- changes to the conversation and the settings ----------------------------------------

    def branch(self, entry_id: str | None) -> None:
        """Continue from ``entry_id`` (None: from the start); SessionBusy while running."""
        self._check_idle("branch")
        self.file.branch(entry_id)
        self.agent.messages[:] = self.file.messages()

    def rename(self, title: str) -> None:
        """Set the session's title (recorded in the file)."""
        self.file.append(SessionInfoEntry(title=title))
        self.settings.title = title

    def fork(self, root: Path, entry_id: str | None, new_id: str | None) -> Path:
        """Copy the branch up to ``entry_id`` into a new session file; return its path."""
        forked = self.file.fork(root, entry_id, session_id=new_id)
        forked.close()
        return forked.path

    def use_model(self, provider: Provider, provider_name: str, model: str) -> None:
        """Call ``model`` through ``provider`` from the next LLM call on (recorded in the file)."""
        self.agent.provider, self.agent.model = provider, model
        self.settings.provider, self.settings.model = provider_name, model
        self._model_source = None
        self.file.append(ModelChangeEntry(provider=provider_name, model=model))

    async def ensure_model(self) -> None:
        """Build the session's provider if it was loaded without one; ConfigError (what to
        set) when it cannot be built — the session stays loaded and readable."""
        source = self._model_source
        if source is None:
            return
        s = self.settings
        resolved = await source(s.provider, s.model, s.provider_env)
        if self._model_source is not source:  # setModel won meanwhile
            return
        self.agent.provider, self.agent.model = resolved.provider, resolved.model
        s.provider, s.model = resolved.provider_name, resolved.model
        window = self.compaction.context_window or resolved.context_window
        self.compaction = msgspec.structs.replace(self.compaction, context_window=window)
        self._model_source = None

    async def auto_compact(self, reason: str) -> bool:
        """The agent's compaction hook: on overflow, or on threshold when the context is large."""
        if reason == "threshold" and not self.compaction.over_threshold(self.agent.messages):
            return False
        result = await self.compact("overflow" if reason == "overflow" else "threshold")
        return result.compacted

    async def compact(self, reason: Reason, instructions: str | None = None) -> CompactResult:
        """Summarise everything before the cut; emits compaction_start/compaction_end."""
        messages = self.agent.messages
        cut = cut_index(messages, self.compaction.keep_tokens)
        self.emit(CompactionStart(reason=reason))
        before = estimate_tokens(messages)
        summary: str | None = None
        error: str | None = "nothing to compact"
        if 0 < cut < len(messages):
            request = summary_request(self.agent.model, messages[:cut], instructions)
            summary, error = await summarise(self.agent.provider, request)
        if summary is None:
            self.emit(CompactionEnd(reason=reason, tokens_before=before, error=error))
            return CompactResult(compacted=False, tokens_before=before, tokens_after=before)
        first_kept = messages[cut].id
        self.file.append_compaction(summary, first_kept, before)
        self.agent.messages[:] = self.file.messages()
        after = estimate_tokens(self.agent.messages)
        end = CompactionEnd(
            reason=reason, summary=summary, tokens_before=before, first_kept_entry_id=first_kept
        )
        self.emit(end)
        return CompactResult(
            compacted=True, tokens_before=before, tokens_after=after, summary=summary
        )

    def set_permission_mode(self, mode: PermissionMode) -> None:
        """Apply ``mode`` to the next tool calls and record it in the session file."""
        self.policy.mode = mode
        self.settings.permission_mode = mode
        saved = self.file.settings() or SettingsEntry()
        self.file.append(msgspec.structs.replace(saved, id="", permission_mode=mode))
        self.file.sync()

    def state(self) -> SessionStateResult:
        s = self.settings
        return SessionStateResult(
            session_id=s.session_id,
            status="running" if self.running else "idle",
            provider=s.provider,
            model=s.model,
            permission_mode=s.permission_mode,
            steering=list(self.agent.queues.steering),
            follow_up=list(self.agent.queues.follow_up),
            usage=self.file.usage(),
            message_count=len(self.agent.messages),
            title=s.title,
        )

    async def shutdown(self) -> None:
        """Cancel a running run, wait for it to settle, and close the session file."""
        if self.run_task is not None and not self.run_task.done():
            self.run_task.cancel()
            await asyncio.gather(self.run_task, return_exceptions=True)
        await self._syncs.wait()
        self.file.close()
