"""One whole turn of a session, as ``agentd_run`` and ``agentd_reply`` run it: the prompt
sent, the session's events followed (progress, changed files, the final text) and its
permission requests answered by the caller's :data:`Approve`, until the run ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from agentd.protocol.content import AssistantMessage
from agentd.protocol.events import (
    Event,
    MessageEnd,
    SessionEvent,
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
from agentd.rpc import Connection, Router

Progress = Callable[[str], Awaitable[None]]
"""Told what the run does (a turn starts, a tool runs)."""
Approve = Callable[[RequestPermissionParams], Awaitable[RequestPermissionResult]]
"""Answers one of the run's permission requests."""


class TurnOutcome(msgspec.Struct):
    """What a finished turn answers: the final text and its ``structuredContent``."""

    session_id: str
    text: str
    result: PromptResult
    files_changed: list[str]

    def structured(self) -> dict[str, Any]:
        usage = msgspec.to_builtins(self.result.usage)
        return {
            "sessionId": self.session_id,
            "stopReason": self.result.stop_reason,
            "usage": usage,
            "filesChanged": self.files_changed,
        }


class _Watch:
    """The events of one running turn."""

    def __init__(self, progress: Progress, approve: Approve) -> None:
        self.progress = progress
        self.approve = approve
        self.text = ""
        self.editing: dict[str, list[str]] = {}
        self.changed: dict[str, None] = {}
        self.reports: asyncio.Queue[str] = asyncio.Queue()

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
    """Runs turns on one native connection (its :meth:`router` must be the connection's)."""

    def __init__(self) -> None:
        self.conn: Connection | None = None
        self._watches: dict[str, _Watch] = {}

    def router(self) -> Router:
        router = Router()
        router.on_notification("session/event", self._on_event, SessionEvent)
        router.add("session/requestPermission", self._on_permission, RequestPermissionParams)
        return router

    async def run(
        self, session_id: str, prompt: str, progress: Progress, approve: Approve
    ) -> TurnOutcome:
        """Prompt the session and wait for the run's end; a cancel of the caller cancels the
        run (``session/cancel``) before it propagates."""
        assert self.conn is not None
        watch = self._watches[session_id] = _Watch(progress, approve)
        reporter = asyncio.create_task(_report(watch))
        try:
            result = await self.conn.request(
                "session/prompt",
                PromptParams(session_id=session_id, text=prompt),
                result_type=PromptResult,
            )
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(
                    self.conn.request("session/cancel", SessionIdParams(session_id=session_id))
                )
            raise
        finally:
            reporter.cancel()
            self._watches.pop(session_id, None)
        return TurnOutcome(session_id, watch.text, result, list(watch.changed))

    def _on_event(self, conn: Connection, frame: SessionEvent) -> None:
        watch = self._watches.get(frame.session_id)
        if watch is not None:
            watch.see(frame.event)

    async def _on_permission(
        self, conn: Connection, params: RequestPermissionParams
    ) -> RequestPermissionResult:
        watch = self._watches.get(params.session_id)
        if watch is None:
            return RequestPermissionResult(outcome="reject_once")
        return await watch.approve(params)


async def _report(watch: _Watch) -> None:
    """Send the turn's progress reports in order (a slow caller never blocks the events)."""
    while True:
        text = await watch.reports.get()
        with contextlib.suppress(Exception):
            await watch.progress(text)
