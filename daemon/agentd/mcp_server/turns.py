"""One whole turn of a session, as ``agentd_run`` and ``agentd_reply`` run it, through the
session API: the prompt sent with a subscriber that follows the session's events (progress,
changed files, the final text) and answers its permission requests with the caller's
:data:`Approve`, until the run ends. An approval the caller cannot be asked
(:class:`ApprovalUnavailable`) is logged, refused and stops the run at once: the turn's
outcome carries the reason (``unasked``), never a wait for the approval timeout.

The session API is opened on the first turn (:meth:`Turns.sessions`), not before the MCP
host's ``initialize`` is answered.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from agentd.api.subscriber import new_key
from agentd.log import get_logger
from agentd.protocol.content import AssistantMessage
from agentd.protocol.events import (
    Event,
    MessageEnd,
    PermissionOption,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnStart,
)
from agentd.protocol.methods import (
    PromptParams,
    PromptResult,
    RequestPermissionParams,
    RequestPermissionResult,
    SessionIdParams,
)
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult

if TYPE_CHECKING:
    from agentd.api import SessionApi
    from agentd.api.subscriber import Delivery
    from agentd.frontend import FrontEndSessions

Progress = Callable[[str], Awaitable[None]]
"""Told what the run does (a turn starts, a tool runs)."""
Approve = Callable[[RequestPermissionParams], Awaitable[RequestPermissionResult]]
"""Answers one of the run's permission requests; raises :class:`ApprovalUnavailable` when the
caller cannot be asked."""
Ask = Callable[[AskQuestionParams], Awaitable[AskQuestionResult]]
"""Answers one of the run's questions (the caller's elicitation)."""
Opener = Callable[[], Awaitable["FrontEndSessions"]]
"""Opens the session API (in-process or the shared daemon's)."""

log = get_logger("agentd.mcp_server")


class ApprovalUnavailable(Exception):
    """The caller cannot be asked for an approval; the message says why, for the host."""


class TurnOutcome(msgspec.Struct):
    """What a finished turn answers: the final text and its ``structuredContent``."""

    session_id: str
    text: str
    result: PromptResult
    files_changed: list[str]
    unasked: str | None = None
    """Why an approval could not be asked (the run was stopped), or None."""

    def structured(self) -> dict[str, Any]:
        usage = msgspec.to_builtins(self.result.usage)
        return {
            "sessionId": self.session_id,
            "stopReason": self.result.stop_reason,
            "usage": usage,
            "filesChanged": self.files_changed,
        }


class _Watch:
    """The subscriber of one running turn (:class:`agentd.api.Subscriber`): follows its
    events and answers its permission requests with the caller's :data:`Approve`, its
    questions with ``ask`` (None: the caller cannot be asked)."""

    def __init__(self, progress: Progress, approve: Approve, ask: Ask | None = None) -> None:
        self.ask = ask
        self.key = new_key()
        self.closed = False
        self.answers_permissions = True
        self.progress = progress
        self.approve = approve
        self.text = ""
        self.editing: dict[str, list[str]] = {}
        self.changed: dict[str, None] = {}
        self.reports: asyncio.Queue[str | None] = asyncio.Queue()
        self.unasked: str | None = None
        self.stop: Callable[[], None] = lambda: None

    def deliver(self, item: Delivery) -> None:
        self.see(item.event().event)

    async def request_permission(
        self, params: RequestPermissionParams, timeout: float
    ) -> PermissionOption | None:
        """The caller's answer; one that cannot be asked refuses the call and stops the run."""
        try:
            answer = await self.approve(params)
        except ApprovalUnavailable as exc:
            if self.unasked is None:
                self.unasked = str(exc)
                log.warning("approval not asked", tool=params.tool, reason=str(exc))
                self.stop()
            return "reject_once"
        return answer.outcome

    def answers_questions(self) -> bool:
        return self.ask is not None and not self.closed

    async def ask_question(
        self, params: AskQuestionParams, timeout: float
    ) -> AskQuestionResult | None:
        """The caller's answers (an MCP elicitation)."""
        return None if self.ask is None else await self.ask(params)

    def see(self, event: Event) -> None:
        if isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            self.text = event.message.text() or self.text
        elif isinstance(event, TurnStart):
            self.reports.put_nowait(f"turn {event.turn}")
        elif isinstance(event, ToolExecutionStart):
            self.reports.put_nowait(f"running {event.name}")
            if event.kind == "edit":
                self.editing[event.tool_call_id] = [loc.path for loc in event.locations]
        elif isinstance(event, ToolExecutionEnd):
            paths = self.editing.pop(event.tool_call_id, [])
            if not event.is_error:
                self.changed.update(dict.fromkeys(paths))


class Turns:
    """Runs turns through the session API (in-process or the shared daemon's)."""

    def __init__(self, opener: Opener | None = None) -> None:
        self.api: SessionApi | None = None
        self._opener = opener
        self._opened: FrontEndSessions | None = None
        self._opening: asyncio.Lock | None = None
        self.created: set[str] = set()
        """The sessions ``agentd_run`` opened in this process: the only ones ``agentd_reply``
        continues."""
        self._tasks: set[asyncio.Task[Any]] = set()

    async def sessions(self) -> SessionApi:
        """The session API, opened on first use (OSError when the shared daemon cannot be
        reached or started)."""
        if self.api is not None:
            return self.api
        assert self._opener is not None
        self._opening = self._opening or asyncio.Lock()
        async with self._opening:
            if self.api is None:
                self._opened = await self._opener()
                self.api = self._opened.api
        return self.api

    async def close(self) -> None:
        """Close the session API if it was opened."""
        if self._opened is not None:
            await self._opened.close()

    async def run(
        self,
        session_id: str,
        prompt: str,
        progress: Progress,
        approve: Approve,
        ask: Ask | None = None,
    ) -> TurnOutcome:
        """Prompt the session (watching it for the turn) and wait for the run's end; a cancel
        of the caller cancels the run (``session/cancel``) before it propagates. ``ask``
        answers the run's questions (None: nobody can)."""
        api = await self.sessions()
        watch = _Watch(progress, approve, ask)
        reporter = asyncio.create_task(_report(watch))
        ids = SessionIdParams(session_id=session_id)
        watch.stop = lambda: self._background(api.cancel(ids))
        try:
            result = await api.prompt(PromptParams(session_id=session_id, text=prompt), watch)
        except asyncio.CancelledError:
            # in a task of its own: the SDK cancels the handler's whole (anyio) scope, in
            # which every further await would be cancelled again
            self._background(api.cancel(ids))
            watch.closed = True
            reporter.cancel()
            raise
        watch.reports.put_nowait(None)  # the reports of the turn go out first
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(reporter), 5)
        watch.closed = True
        self._background(api.unsubscribe(ids, watch))
        return TurnOutcome(session_id, watch.text, result, list(watch.changed), watch.unasked)

    def _background(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


async def _report(watch: _Watch) -> None:
    """Send the turn's progress reports in order (a slow caller never blocks the events)."""
    while (text := await watch.reports.get()) is not None:
        with contextlib.suppress(Exception):
            await watch.progress(text)
