"""A session's background processes: :class:`ProcessTable`.

The table belongs to the session (the tools reach it through their ``processes`` port), not
to a run or a client: its processes run on when a run ends or a client goes away, and end
when the session is closed, unloaded or deleted (:meth:`ProcessTable.close`) or the daemon
stops. Ids are ``p1``, ``p2``… in start order, never reused in the session's life in this
daemon. At most ``cap`` processes run at once (:meth:`reserve` refuses more, saying how to
go on). Each process's events (``process_start``, ``process_output``, ``process_exit``) go to
:attr:`ProcessTable.emit`, which the session sets to its event sink.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agentd.protocol.events import Event
from agentd.protocol.processes import ProcessExit, ProcessInfo, ProcessOutput, ProcessStart

if TYPE_CHECKING:
    from agentd.tools.process.background import BackgroundProcess

NOTE_LINES = 10
"""Lines of output an exit note quotes."""
NOTE_CHARS = 1500


class ProcessRefused(Exception):
    """A process cannot start (the cap, a closing session) or is unknown; ``str()`` is
    written for the model (the tools raise it as their ToolError) and for clients."""


def _ignore(_event: Event) -> None:
    return None


class ProcessTable:
    """The background processes of one session (see the module docstring)."""

    def __init__(self, session_id: str = "") -> None:
        self.session_id = session_id
        self.processes: dict[str, BackgroundProcess] = {}
        self.emit: Callable[[Event], None] = _ignore
        self._count = 0
        self._starting = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed = False

    # --- starting ----------------------------------------------------------------------------

    def reserve(self, cap: int) -> str:
        """The id of a process about to start; ProcessRefused when ``cap`` run (or start) already,
        or the session is closing. Pair with :meth:`unreserve` once it started or failed."""
        if self.closed:
            raise ProcessRefused("The session is closing; no background process can start now.")
        live = len(self.live()) + self._starting
        if live >= cap:
            ids = ", ".join(process.id for process in self.live())
            raise ProcessRefused(
                f"This session already runs {live} background processes, the most it may "
                f"([tools] bash_max_background = {cap}): {ids}. Stop one with process_kill "
                "(or wait for one to end) before starting another, or run this command in "
                "the foreground."
            )
        self._starting += 1
        self._count += 1
        return f"p{self._count}"

    def unreserve(self) -> None:
        self._starting -= 1

    def add(self, process: BackgroundProcess, finish: Callable[[], Awaitable[None]]) -> None:
        """Keep ``process`` (started) and watch it; ``finish`` runs after its end, before its
        ``process_exit`` event."""
        self.processes[process.id] = process

        async def watched() -> None:
            await process.watch(finish)
            self.emit(ProcessExit(process=process.info()))

        task = asyncio.get_running_loop().create_task(watched(), name=f"process-{process.id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        self.emit(ProcessStart(process=process.info()))

    def output(self, ident: str, text: str) -> None:
        """A process's throttled output, as an event."""
        self.emit(ProcessOutput(id=ident, text=text))

    # --- reading -----------------------------------------------------------------------------

    def get(self, ident: str) -> BackgroundProcess:
        """The process ``ident``; ProcessRefused naming the session's ids when there is none."""
        process = self.processes.get(ident.strip())
        if process is None:
            known = ", ".join(self.processes) or "none yet"
            raise ProcessRefused(
                f"No background process {ident!r} in this session (its processes: {known}). "
                "Start one with bash and background: true."
            )
        return process

    def live(self) -> list[BackgroundProcess]:
        return [process for process in self.processes.values() if process.running]

    def infos(self, *, live_only: bool = False) -> list[ProcessInfo]:
        chosen = self.live() if live_only else list(self.processes.values())
        return [process.info() for process in chosen]

    def take_exit_notes(self) -> list[str]:
        """One note per process that ended since the model last looked (each told once)."""
        notes = []
        for process in self.processes.values():
            if process.running or process.exit_seen:
                continue
            process.exit_seen = True
            notes.append(exit_note(process))
        return notes

    # --- ending ------------------------------------------------------------------------------

    async def close(self, grace: float) -> None:
        """End every process (TERM, KILL after ``grace``) and wait for their ends, and the
        session's sandbox hosts (:mod:`agentd.tools.process.host_pool`) with what runs in
        them; no process starts afterwards."""
        self.closed = True
        hosts = sys.modules.get("agentd.tools.process.host_pool")  # loaded once one started
        if hosts is not None and self.session_id:
            hosts.retire(self.session_id)
        live = self.live()
        if live:
            await asyncio.gather(*(process.kill(grace) for process in live))
        tasks = list(self._tasks)
        if tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait(tasks, timeout=5)


def exit_note(process: BackgroundProcess) -> str:
    """What the model is told of a process that ended between its turns."""
    info = process.info()
    lines = process.tail(NOTE_CHARS).splitlines()[-NOTE_LINES:]
    quoted = "\n".join(lines) if lines else "(no output)"
    return (
        f"[Background process {info.id} (`{_short(info.command)}`) {process.state_text()} "
        f"after {info.runtime_ms / 1000:.1f} s, {info.output_bytes} bytes of output. "
        f"Its last lines:\n{quoted}\n]"
    )


def _short(command: str, limit: int = 120) -> str:
    line = " ".join(command.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
