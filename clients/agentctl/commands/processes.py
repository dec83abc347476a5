"""Background processes in the shell: ``agentctl ps [SESSION]`` and ``agentctl kill SESSION
ID``.

``ps`` lists the background processes of one session (``session/processes``), or of every
session the daemon has loaded: session, id, state, runtime, output size, command.
``kill`` ends one (``session/killProcess``: TERM to its group, KILL after the grace period)
and prints how it ended. Both take a unique prefix of the session id.
"""

from __future__ import annotations

import sys

from agentctl.client import connect
from agentctl.commands.sessions import print_json
from agentctl.common import resolve_session_ids, run_command, socket_option
from agentctl.options import KillOptions, PsOptions
from agentctl.render.processfmt import command_text, seconds, size, state_text
from agentctl.run import outcome
from agentd.protocol.processes import KillProcessParams, ProcessesParams


def processes_main(options: PsOptions | KillOptions) -> int:
    """Entry point of ``ps`` and ``kill``."""
    if isinstance(options, PsOptions):
        return run_command(lambda: _ps(options))
    return run_command(lambda: _kill(options))


async def _ps(options: PsOptions) -> int:
    async with await connect(socket_option(options)) as client:
        options = await resolve_session_ids(client, options)
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
            f"{seconds(info.runtime_ms):>7}   {size(info.output_bytes):>6}   "
            f"{command_text(info)}\n"
        )
    return outcome.OK


async def _kill(options: KillOptions) -> int:
    async with await connect(socket_option(options)) as client:
        options = await resolve_session_ids(client, options)
        params = KillProcessParams(session_id=options.session_id, process_id=options.process_id)
        info = await client.sessions.kill_process(params)
    sys.stdout.write(f"{info.id} {state_text(info)} after {seconds(info.runtime_ms)}\n")
    return outcome.OK
