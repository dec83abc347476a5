"""Background processes of a session on the wire: what one is, its events, its methods.

A ``bash`` call with ``background: true`` starts a process that belongs to the session (not
to the run or the client that started it). :class:`ProcessInfo` describes one; the events
:class:`ProcessStart`, :class:`ProcessOutput` and :class:`ProcessExit` follow it; the tools
``process_output``, ``process_kill`` and ``process_list`` report it in
:class:`ProcessDetails`; ``session/processes`` and ``session/killProcess`` let clients list
and end them.
"""

from __future__ import annotations

from typing import Literal

from agentd.protocol.base import Params, Result, Wire

ProcessState = Literal["running", "exited", "killed"]
"""``running``; ``exited`` (on its own, with ``exitCode``); ``killed`` (by ``process_kill``,
``session/killProcess``, the session's close, or a signal: ``signal`` names it)."""


class ProcessInfo(Result):
    """One background process of a session.

    ``id`` is ``p1``, ``p2``… (unique in the session); ``pid`` the shell's process id;
    ``started_at``/``ended_at`` are Unix times in seconds (``ended_at`` None while it runs);
    ``runtime_ms`` how long it ran (so far); ``output_bytes`` how much it printed (stdout and
    stderr merged); ``spill_path`` the file holding its output from the first byte (at most
    the spill cap); ``tail`` its last lines (at most 2 KB); ``tool_call_id`` the ``bash`` call
    that started it."""

    id: str
    command: str
    pid: int
    state: ProcessState
    started_at: float
    runtime_ms: float
    output_bytes: int
    description: str | None = None
    exit_code: int | None = None
    signal: str | None = None
    ended_at: float | None = None
    spill_path: str | None = None
    tail: str = ""
    tool_call_id: str = ""


class ProcessStart(Wire, tag="process_start", tag_field="type"):
    """A background process started (its ``bash`` call returns right after). Also sent, with
    ``seq`` 0, to a client loading the session with ``replay`` for each process it has."""

    process: ProcessInfo


class ProcessOutput(Wire, tag="process_output", tag_field="type"):
    """More output of the background process ``id``: at most one event per update interval
    (like bash's streamed deltas), the middle of a burst dropped (``[… N chars not streamed
    …]``); the spill file has everything up to its cap."""

    id: str
    text: str


class ProcessExit(Wire, tag="process_exit", tag_field="type"):
    """A background process ended (on its own or killed); ``process`` as it ended."""

    process: ProcessInfo


class ProcessesParams(Params):
    """``session/processes``: the background processes of ``session_id`` (every loaded
    session's when absent), running and ended."""

    session_id: str | None = None


class SessionProcesses(Result):
    """The background processes of one session, oldest first."""

    session_id: str
    processes: list[ProcessInfo]


class ProcessesResult(Result):
    """``session/processes``: one entry per session that has processes (or the one asked)."""

    sessions: list[SessionProcesses]


class KillProcessParams(Params):
    """``session/killProcess``: end the background process ``process_id`` of ``session_id``
    (SIGTERM to its process group and everything it started, SIGKILL after the grace
    period). Answers when it has ended; an ended process is answered as it is."""

    session_id: str
    process_id: str


class ProcessDetails(Wire, tag="process", tag_field="type"):
    """A background process as a tool call left it (``bash`` with ``background``,
    ``process_output``, ``process_kill``): its state now; ``skipped_bytes`` of output not
    returned (more than the result limits since the last read: the spill file has it)."""

    process: ProcessInfo
    skipped_bytes: int = 0


class ProcessListDetails(Wire, tag="process_list", tag_field="type"):
    """``process_list``: every background process of the session."""

    processes: list[ProcessInfo]


ProcessEvent = ProcessStart | ProcessOutput | ProcessExit

__all__ = [
    "KillProcessParams",
    "ProcessDetails",
    "ProcessEvent",
    "ProcessExit",
    "ProcessInfo",
    "ProcessListDetails",
    "ProcessOutput",
    "ProcessStart",
    "ProcessState",
    "ProcessesParams",
    "ProcessesResult",
    "SessionProcesses",
]
