"""A session's event sink: every event of the session (its agent's, its compactions', its
warnings) is numbered and fanned out by the :class:`~agentd.session.bus.EventBus`, and what
completes a record is written to the session file (messages, plans, hook results, changed
files; flushed per entry, fsynced in a worker thread at every turn end and after a run's last
entry, through the :class:`~agentd.session.syncing.SyncQueue`).

The sink is built before the parts that report through it (compactor, hooks, MCP tools, the
agent) and given to each at construction. It reports; it never cancels the run it reports:
a write that fails inside a run raises :class:`~agentd.agent.scheduling.SinkFailed` into the
loop, and a failed fsync ends the run through the conversation's
:meth:`~agentd.agent.loop.Agent.abort`. The conversation (the agent, built around this sink)
is the one collaborator it is given after construction (:meth:`serve`): the agent is made
with the sink's :meth:`emit`, so neither can be built first with the other.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, NoReturn, Protocol

from agentd.agent.scheduling import SinkFailed
from agentd.errors import StoreWriteFailed
from agentd.log import get_logger
from agentd.protocol.events import (
    AgentEnd,
    Event,
    HookResult,
    MessageEnd,
    PlanUpdate,
    SessionWarning,
    ToolExecutionEnd,
    TurnEnd,
)
from agentd.protocol.processes import ProcessExit
from agentd.protocol.session_file import HookEntry
from agentd.session.stream_redact import StreamRedactor
from agentd.session.syncing import SyncQueue

if TYPE_CHECKING:
    from agentd.protocol.content import Message
    from agentd.session.bus import EventBus
    from agentd.session.changes import ChangeRecorder
    from agentd.session.phase import RunState
    from agentd.store import SessionFile

log = get_logger("agentd.session")


class Conversation(Protocol):
    """What the sink needs of the agent it reports for: ending the run in progress for a
    failure found outside the loop, and continuing from what the file holds."""

    def abort(self, failure: SinkFailed) -> bool: ...

    def adopt(self, messages: list[Message]) -> None: ...


class SessionSink:
    """The event sink of one session (see the module docstring). All methods run on the
    daemon's event loop."""

    def __init__(
        self, file: SessionFile, bus: EventBus, changes: ChangeRecorder, run: RunState
    ) -> None:
        self.file, self.bus, self.changes, self.run = file, bus, changes, run
        self.store_error: str | None = None
        """Set while a run's write failed: nothing more of that run is written."""
        self._redactor = StreamRedactor(file.redact_text, file.held_from)
        self._syncs = SyncQueue(lambda: file.sync(), self._sync_failed)
        self._conversation: Conversation | None = None

    def serve(self, conversation: Conversation) -> None:
        """Report for ``conversation`` (the agent built around this sink; once)."""
        self._conversation = conversation

    def emit(self, event: Event) -> None:
        """Number and broadcast ``event``; persist completed records.

        A failed write (a full disk: :class:`StoreWriteFailed`) is reported once, as a
        ``session_warning``. Inside a run the sink then raises :class:`SinkFailed` (it never
        cancels the run): the agent ends the run, nothing more of it is written, and its
        ``agent_end`` (preceded by an ``error`` event, code ``store_error``) says why.
        Outside a run the error goes to the caller.
        """
        if self.store_error is None:
            try:
                self._record(event)
            except StoreWriteFailed as exc:
                self.write_failed(exc)
        for released in self._redactor.events(event):
            self.bus.publish(released)

    def _record(self, event: Event) -> None:
        file = self.file
        if isinstance(event, MessageEnd):
            file.append_message(event.message)
        elif isinstance(event, PlanUpdate):
            file.append_plan(event.entries)
        elif isinstance(event, HookResult):
            file.append(HookEntry(hook=event))
        elif isinstance(event, ToolExecutionEnd | AgentEnd | ProcessExit):
            self.changes.write_pending(file)
        elif isinstance(event, TurnEnd):
            self._syncs.request()

    def warn(self, text: str) -> None:
        """A warning for the session's subscribers (an MCP server that is not available)."""
        self.emit(SessionWarning(message=text))

    async def settle_changes(self) -> None:
        """The agent's ``settle``: wait (without holding the event loop) until the run's
        changed files are recorded, and write them before its ``agent_end``."""
        await self.changes.settled()
        try:
            self.changes.write_pending(self.file)
        except StoreWriteFailed as exc:
            self.write_failed(exc)

    def run_ended(self) -> None:
        """After a run's loop returned: the records its settle missed, the last fsync asked
        for (the answer does not wait for it: a failure comes as a ``session_warning``), and
        after a failed write the conversation again what the file holds."""
        with contextlib.suppress(StoreWriteFailed):
            self.changes.write_pending(self.file)
        self._syncs.request()
        if self.store_error is not None:
            self.store_error = None
            self.resync()

    async def durable(self) -> None:
        """Until what was written to the session file is on disk (its fsync runs in the sync
        queue's worker thread, after those asked before); StoreWriteFailed when it fails."""
        await self._syncs.flush()

    async def close(self) -> None:
        """Wait for the fsyncs asked for; the caller closes the file."""
        await self._syncs.wait()

    def write_failed(self, exc: StoreWriteFailed) -> NoReturn:
        """Warn; inside a run raise :class:`SinkFailed`, else resync and re-raise ``exc``."""
        self._warn(exc)
        if self.run.task is None:
            self.resync()
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
        conversation = self._conversation
        if conversation is not None and conversation.abort(SinkFailed(exc.message, "store_error")):
            self.store_error = exc.message
        else:
            self.resync()

    def _warn(self, exc: StoreWriteFailed) -> None:
        log.warning("session write failed", session_id=self.bus.session_id, error=exc.message)
        self.bus.publish(SessionWarning(message=exc.message))

    def resync(self) -> None:
        """After a failed write: the conversation is again what the file holds (calls left
        without a result get one, when the disk takes it). Only while the loop is not
        running."""
        with contextlib.suppress(StoreWriteFailed):
            self.file.repair_interrupted()
        if self._conversation is not None:
            self._conversation.adopt(self.file.messages())
