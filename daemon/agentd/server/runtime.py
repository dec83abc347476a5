"""A loaded session: its agent, event bus, session file, permission policy and current run.

The runtime is the agent's event sink: each event is numbered and fanned out by the
:class:`EventBus`, and completed messages are appended to the session file (flushed per
entry, fsynced in a worker thread at every turn end, and before a run's result is returned).
It outlives the connections that watch it: a client that disconnects mid-run does not stop
the run.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec
import structlog

from agentd.agent import Agent, RunResult
from agentd.budget import Budget
from agentd.errors import ConfigError, SessionBusy, StoreWriteFailed
from agentd.protocol.content import ImageContent, UserContent
from agentd.protocol.events import AgentEnd, ErrorEvent, Event, MessageEnd, SessionWarning, TurnEnd
from agentd.protocol.methods import (
    CancelResult,
    PermissionMode,
    PromptResult,
    RefusedCall,
    SessionInfo,
    SessionStateResult,
)
from agentd.server.bus import EventBus
from agentd.server.files import ClientFiles

if TYPE_CHECKING:
    from agentd.permissions import PermissionPolicy
    from agentd.server.compaction import Compactor
    from agentd.store import SessionFile

log = structlog.get_logger("agentd.session")


@dataclass
class Settings:
    """A session's mutable settings (what ``session/state`` and ``SessionInfo`` report)."""

    session_id: str
    cwd: str
    provider: str
    model: str
    permission_mode: PermissionMode
    title: str | None = None
    provider_env: dict[str, str] | None = field(default=None, repr=False)
    """The client's provider variables (memory only, never written)."""
    config_warnings: list[str] = field(default_factory=list)
    untrusted_config: str | None = None


class SessionRuntime:
    """One loaded session. All methods run on the daemon's event loop."""

    def __init__(
        self,
        settings: Settings,
        agent: Agent,
        file: SessionFile,
        policy: PermissionPolicy,
    ) -> None:
        self.settings = settings
        self.agent = agent
        self.file = file
        self.policy = policy
        self.bus = EventBus(settings.session_id, redact=file.redact_json)
        self.run_task: asyncio.Task[RunResult] | None = None
        self.compactor: Compactor | None = None
        self.store_error: str | None = None
        self._syncing: asyncio.Future[None] | None = None
        self._finishing = False
        agent.sink = self.emit
        agent.context.files = ClientFiles(settings.session_id, self.bus.subscribers.values)

    @property
    def id(self) -> str:
        return self.settings.session_id

    @property
    def running(self) -> bool:
        return self.run_task is not None and not self.run_task.done()

    def info(self) -> SessionInfo:
        s = self.settings
        return SessionInfo(
            session_id=s.session_id,
            cwd=s.cwd,
            provider=s.provider,
            model=s.model,
            permission_mode=s.permission_mode,
            title=s.title,
            path=str(self.file.path),
            warnings=list(s.config_warnings),
            untrusted_config=s.untrusted_config,
        )

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
                    self._sync_soon()
            except StoreWriteFailed as exc:
                self._write_failed(exc)
        if isinstance(event, AgentEnd) and self.store_error is not None:
            self.bus.publish(ErrorEvent(message=self.store_error, code="store_error"))
            event = msgspec.structs.replace(event, stop_reason="error", error=self.store_error)
        self.bus.publish(event)

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

    def _sync_soon(self) -> None:
        """fsync the file in a worker thread (one at a time, in order), so a slow disk never
        holds the event loop; a failure is reported like a failed append."""
        self._syncing = asyncio.ensure_future(self._sync_after(self._syncing))

    async def _sync_after(self, previous: asyncio.Future[None] | None) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        try:
            await asyncio.to_thread(self.file.sync)
        except StoreWriteFailed as exc:
            if self.store_error is None and not self._report(exc) and self._finishing:
                self.store_error = exc.message  # the run's result says so

    async def flush(self) -> None:
        """Wait until everything appended so far is fsynced (failures reported)."""
        self._sync_soon()
        if self._syncing is not None:
            await asyncio.gather(self._syncing, return_exceptions=True)

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
        budget: Budget | None = None,
    ) -> asyncio.Task[RunResult]:
        """Start a run (``max_turns``: this run's limit; ``budget``: its spending caps);
        SessionBusy if one is in progress, ConfigError if a cost cap meets unknown prices."""
        self._check_idle()
        if budget is not None and budget.max_cost is not None:
            self._check_priced()
        if self.compactor is not None:
            self.compactor.check_prompt_fits(text)
        content: list[UserContent] = list(images)
        run = self._run(text, content, max_turns, budget)
        task = asyncio.create_task(run, name=f"run-{self.id}")
        self.run_task = task
        return task

    def add_note(self, text: str) -> None:
        """Record ``text`` as a user message without a run; SessionBusy if one is in progress.

        The message is persisted and broadcast at once; the model reads it on the next run.
        """
        self._check_idle()
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

    def _check_idle(self) -> None:
        if self.running:
            raise SessionBusy(
                f"session {self.id} is running; wait for it to finish, or use "
                "session/steer, session/followUp or session/cancel"
            )

    async def _run(
        self,
        text: str,
        images: list[UserContent],
        max_turns: int | None,
        budget: Budget | None,
    ) -> RunResult:
        structlog.contextvars.bind_contextvars(session_id=self.id)
        self._finishing = False
        result = await self.agent.run(text, images, max_turns=max_turns, budget=budget)
        self._finishing = True  # a failure found from here on changes the result only
        await asyncio.shield(self.flush())
        if self.store_error is not None:
            result.stop_reason, result.error = "error", self.store_error
            self.store_error = None
            self._resync()
        if self.agent.failure is not None:
            log.error("run failed", exc_info=self.agent.failure)
            self.agent.failure = None
        return result

    def cancel(self) -> CancelResult:
        """Stop the current run (if any) and drop the queued messages."""
        dropped = self.agent.drop_queues()
        if not self.running or self.run_task is None:
            return CancelResult(cancelled=False, dropped=dropped)
        self.run_task.cancel()
        return CancelResult(cancelled=True, dropped=dropped)

    def set_permission_mode(self, mode: PermissionMode) -> None:
        """Apply ``mode`` to the next tool calls and record it in the session file."""
        from agentd.protocol.session_file import SettingsEntry

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
            steering=list(self.agent.steering),
            follow_up=list(self.agent.follow_up),
            usage=self.file.usage(),
            message_count=len(self.agent.messages),
            title=s.title,
        )

    async def shutdown(self) -> None:
        """Cancel a running run, wait for it to settle, and close the session file."""
        if self.run_task is not None and not self.run_task.done():
            self.run_task.cancel()
            await asyncio.gather(self.run_task, return_exceptions=True)
        if self._syncing is not None:
            await asyncio.gather(self._syncing, return_exceptions=True)
        self.file.close()


def prompt_result(result: RunResult) -> PromptResult:
    """The ``session/prompt`` answer for a finished run."""
    return PromptResult(
        stop_reason=result.stop_reason,
        turns=result.turns,
        usage=result.usage,
        cost=result.usage.cost,
        error=result.error,
        permissions_refused=[
            RefusedCall(tool_call_id=call.id, name=call.name, reason=reason)
            for call, reason in result.refused
        ],
    )
