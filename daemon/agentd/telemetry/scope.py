"""What an observer of a session's events knows besides the event: :class:`RunScope`, and
the observer contract (:class:`Observer`).

A session's sink (:class:`agentd.session.sink.SessionSink`) hands every event it emits,
with the session's scope, to the daemon's observers after the event went to the session's
subscribers: the daemon's counters (:class:`~agentd.telemetry.counters.Counters`, always)
and, when telemetry is on, the OpenTelemetry observer. The scope's run fields are set by the
session runtime when a run starts (before its ``agent_start``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from agentd.protocol.events import Event


class RunScope:
    """One session as its observers see it: ``session_id``, ``parent_session_id`` (a
    subagent's: its parent's), ``redact`` (the session file's: secrets out of any captured
    text), and, for the run in progress, the W3C ``trace_parent`` it was given (None: none)
    and the provider and model it calls."""

    __slots__ = ("model", "parent_session_id", "provider", "redact", "session_id", "trace_parent")

    def __init__(
        self,
        session_id: str,
        parent_session_id: str | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.session_id = session_id
        self.parent_session_id = parent_session_id
        self.redact: Callable[[str], str] = redact or _same
        self.trace_parent: str | None = None
        self.provider = ""
        self.model = ""

    def run_starts(self, provider: str, model: str, trace_parent: str | None) -> None:
        """The facts of the run about to start."""
        self.provider, self.model, self.trace_parent = provider, model, trace_parent


class Observer(Protocol):
    """Told every event of every session, on the daemon's event loop, after its subscribers.
    ``observe`` must be quick, must never block and never raise (a failure is its own to log:
    it must not reach the run)."""

    def observe(self, scope: RunScope, event: Event) -> None: ...


def _same(text: str) -> str:
    return text
