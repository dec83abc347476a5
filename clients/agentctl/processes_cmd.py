"""Background processes in the shell: ``agentctl ps [SESSION]``, ``agentctl kill SESSION ID``
and the one-line form the renderers print for ``process_start``/``process_exit``.

``ps`` lists the background processes of one session (``session/processes``), or of every
session the daemon has loaded: session, id, state, runtime, output size, command.
``kill`` ends one (``session/killProcess``: TERM to its group, KILL after the grace period)
and prints how it ended. Both take a unique prefix of the session id.
"""

from __future__ import annotations

import argparse
from typing import Any

from agentd.protocol.processes import ProcessInfo

COMMANDS = ("ps", "kill")


def add_process_parsers(commands: Any, connection_options: Any) -> None:
    """``ps`` and ``kill`` in the ``agentctl`` parser (``connection_options`` adds
    ``--socket``)."""
    ps = commands.add_parser("ps", help="background processes of a session (or all loaded)")
    connection_options(ps, stdio=False)
    ps.add_argument("session_id", nargs="?", default=None, metavar="SESSION")
    ps.add_argument("--json", action="store_true", help="print the result as JSON")
    kill = commands.add_parser("kill", help="end a background process of a session")
    connection_options(kill, stdio=False)
    kill.add_argument("session_id", metavar="SESSION")
    kill.add_argument("process_id", metavar="ID")


def processes_main(options: argparse.Namespace) -> int:
    """Entry point of ``ps`` and ``kill``."""
    from agentctl.common import run_command

    handler = _ps if options.command == "ps" else _kill
    return run_command(lambda: handler(options))


async def _ps(options: argparse.Namespace) -> int:
    import sys

    from agentctl import outcome
    from agentctl.client import connect
    from agentctl.commands import print_json
    from agentctl.common import resolve_session_ids, socket_option
    from agentd.protocol.processes import ProcessesParams

    async with await connect(socket_option(options)) as client:
        await resolve_session_ids(client, options)
        result = await client.sessions.processes(ProcessesParams(session_id=options.session_id))
    if options.json:
        print_json(result)
        return outcome.OK
    rows = [(entry.session_id, info) for entry in result.sessions for info in entry.processes]
    if not rows:
        sys.stdout.write("no background processes\n")
        return outcome.OK
    sys.stdout.write("SESSION   ID   STATE         RUNTIME   OUTPUT   COMMAND\n")
    for session_id, info in rows:
        sys.stdout.write(
            f"{session_id[:8]:<9} {info.id:<4} {state_text(info):<13} "
            f"{_seconds(info.runtime_ms):>7}   {_size(info.output_bytes):>6}   "
            f"{_command(info)}\n"
        )
    return outcome.OK


async def _kill(options: argparse.Namespace) -> int:
    import sys

    from agentctl import outcome
    from agentctl.client import connect
    from agentctl.common import resolve_session_ids, socket_option
    from agentd.protocol.processes import KillProcessParams

    async with await connect(socket_option(options)) as client:
        await resolve_session_ids(client, options)
        params = KillProcessParams(session_id=options.session_id, process_id=options.process_id)
        info = await client.sessions.kill_process(params)
    sys.stdout.write(f"{info.id} {state_text(info)} after {_seconds(info.runtime_ms)}\n")
    return outcome.OK


def state_text(info: ProcessInfo) -> str:
    """``running``, ``exited 3``, ``killed (SIGTERM)``."""
    if info.state == "exited":
        return f"exited {info.exit_code}"
    if info.state == "killed":
        return f"killed ({info.signal})" if info.signal else "killed"
    return "running"


def process_line(info: ProcessInfo, *, started: bool) -> str:
    """``⚙ p1 started: npm run dev (pid 4242)`` / ``⚙ p1 exited 0 after 3.2s: npm run dev``."""
    if started:
        return f"⚙ {info.id} started: {_command(info)} (pid {info.pid})"
    return f"⚙ {info.id} {state_text(info)} after {_seconds(info.runtime_ms)}: {_command(info)}"


def _command(info: ProcessInfo, limit: int = 80) -> str:
    from agentd.protocol.controls import escape_controls

    line = escape_controls(" ".join(info.command.split()))
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    return f"{line} ({escape_controls(info.description)})" if info.description else line


def _seconds(ms: float) -> str:
    from agentctl.toolfmt import format_seconds

    return format_seconds(ms / 1000)


def _size(count: int) -> str:
    for unit in ("B", "KB", "MB"):
        if count < 1024:
            return f"{count}{unit}"
        count //= 1024
    return f"{count}GB"
