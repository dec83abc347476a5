"""The daemon's sessions hosted in a client's own process (``agentctl send`` with no shared
daemon to use): the session service, with what ``agentd serve --stdio`` does around it.

:func:`host_sessions` makes the process what a private daemon is — non-dumpable (the commands
bash runs cannot read its memory: its API keys), its log in ``log_file`` (JSON lines, never on
stdout or stderr; structlog set up only once something is written), the processes killed
daemons left swept and this process registered — and returns a
:class:`~agentd.session.service.SessionService` over the default session folder and
configuration, the one a shared daemon started with no flags uses. Its ``close`` cancels what
still runs, flushes the session files, ends the processes the tool calls, hooks and MCP
servers left, and writes the log.

No thread is started for any of it: the log is written by the caller's thread (a one-shot
run logs a few lines), the sweep runs inline (it reads one directory when nothing was left).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import msgspec

from agentd import log as logging_setup
from agentd.hardening import make_undumpable
from agentd.housekeeping import end_processes, sweep_orphans
from agentd.session.service import SessionService

_TERMINAL_EXTRAS = ("click", "greenlet")
"""Optional imports of the libraries the session machinery uses that it never needs: httpx's
command-line tool (``click``, and with it ``rich``, ``pygments``), structlog's ``greenlet``
check. A None entry in ``sys.modules`` makes them fail at once (``agentd.cli`` does the same
for the daemon; ``rich`` is left alone here: agentctl renders Markdown with it)."""


class HostedSessions(msgspec.Struct, frozen=True):
    """The service and the function that closes it (and the process's daemon duties)."""

    service: SessionService
    close: Callable[[], Awaitable[None]]


def host_sessions(log_file: Path | None) -> HostedSessions:
    """Set the process up as a private daemon and open its session service (see the module
    docstring); ``log_file`` None: the log goes nowhere."""
    for name in _TERMINAL_EXTRAS:  # as `agentd serve` does: optional imports fail fast
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
    make_undumpable()
    logging_setup.configure("info", log_file or Path("/dev/null"), deferred=True, background=False)
    sweep_orphans()
    service = SessionService()

    async def close() -> None:
        try:
            await service.close()
        finally:
            end_processes()
            logging_setup.close()

    return HostedSessions(service, close)
