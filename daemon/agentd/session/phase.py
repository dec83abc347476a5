"""What a session is doing: its run phase and the handle of its run, in one place.

:class:`RunState` is the only record of it: ``session/state`` reports :attr:`RunState.phase`,
the busy checks read it, and the phase moves only through the methods below::

    idle ──start──▶ starting ──begun──▶ running ⇄ compacting (a run's automatic compaction)
      ▲                 │                  │
      │                 └──cancel──▶ cancelling ◀──cancel──┘
      └────────────── ended (the run's loop returned) ◀──────┘
    idle ⇄ compacting (session/compact)
    idle ⇄ rewinding (session/rewind)

``task`` is the run's task from ``start`` until its loop returns (None otherwise): a run is in
progress exactly while it is set.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

from agentd.errors import SessionBusy
from agentd.protocol.methods import RunPhase


class RunState:
    """The run phase of one session and the handle of its run in progress."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.phase: RunPhase = "idle"
        self.task: asyncio.Task[Any] | None = None

    @property
    def busy(self) -> bool:
        """Any phase but ``idle``: a prompt, note, branch or compaction must wait."""
        return self.phase != "idle"

    def check_idle(self, action: str) -> None:
        """SessionBusy (saying what to do instead) unless the session is idle."""
        if self.phase == "idle":
            return
        doing = self.phase if self.phase in ("compacting", "rewinding") else "running"
        if action in ("prompt", "note"):
            raise SessionBusy(
                f"session {self.session_id} is {doing}; wait for it to finish, or use "
                "session/steer, session/followUp or session/cancel"
            )
        raise SessionBusy(f"session {self.session_id} is {doing}; cannot {action} until it ends")

    def start(self, task: asyncio.Task[Any]) -> None:
        """``task`` runs the session's new run: ``starting`` until it has :meth:`begun`."""
        self.task, self.phase = task, "starting"
        task.add_done_callback(self.ended)

    def begun(self) -> None:
        """The run's loop begins (``running``; a cancel that came first keeps ``cancelling``)."""
        if self.phase == "starting":
            self.phase = "running"

    def ended(self, task: object) -> None:
        """The run of ``task`` is over (its loop returned, or the task ended before it
        began): ``idle``."""
        if task is self.task:
            self.task, self.phase = None, "idle"

    def cancel(self) -> bool:
        """Cancel the run in progress (False when there is none). A run that has not begun
        is cancelled once it has, so it still reports ``agent_start`` and ``agent_end``; a run
        already ``cancelling`` is not cancelled again (its cleanup must not be cut short)."""
        task = self.task
        if task is None:
            return False
        if self.phase == "starting":
            asyncio.get_running_loop().call_soon(task.cancel)
        elif self.phase != "cancelling":
            task.cancel()
        self.phase = "cancelling"
        return True

    @contextlib.contextmanager
    def during(self, phase: RunPhase) -> Iterator[None]:
        """``phase`` for the block, then what it was (unless a cancel moved it on)."""
        before, self.phase = self.phase, phase
        try:
            yield
        finally:
            if self.phase == phase:
                self.phase = before

    async def settled(self) -> None:
        """Until the run in progress (if any) has ended."""
        if self.task is not None:
            await asyncio.gather(self.task, return_exceptions=True)
