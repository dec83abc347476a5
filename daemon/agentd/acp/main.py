"""``agentd acp``: serve one ACP editor on stdin/stdout until it closes the stream.

stdout carries ACP messages only (newline-delimited JSON-RPC); logs are JSON lines on stderr
or in ``--log-file``. The process gets the daemon's hardening: it is non-dumpable and, when it
runs the daemon in-process, sweeps tool processes left by killed daemons. When the editor
closes stdin (or on SIGTERM / SIGINT) requests in flight are cancelled, the sessions' runs
too (in-process) and their files flushed; the process exits 0.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from agentd.acp.agent import AcpAgent
from agentd.frontend import FrontEndOptions
from agentd.rpc import Connection

EOF_POLL = 0.1
"""Seconds between checks whether the editor closed stdin while requests are in flight."""


def run(options: FrontEndOptions, log_file: Path | None = None, log_level: str = "info") -> int:
    """Serve ACP on this process's stdio; return the exit code."""
    from agentd import log as logging_setup
    from agentd.hardening import make_undumpable
    from agentd.stdio import detach_stdio

    fds = detach_stdio()
    make_undumpable()  # like the daemon: the commands bash runs cannot read our memory (keys)
    try:
        logging_setup.configure(log_level, log_file)
    except (ValueError, OSError) as exc:
        print(f"agentd acp: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(_serve(options, fds))


async def _serve(options: FrontEndOptions, fds: tuple[int, int]) -> int:
    from agentd.housekeeping import loop_exception, start_orphan_sweep
    from agentd.stdio import open_stdio

    asyncio.get_running_loop().set_exception_handler(loop_exception)
    if not options.shared:  # a daemon starts here: what killed daemons left running goes
        start_orphan_sweep()

    reader, writer = await open_stdio(*fds)
    agent = AcpAgent(options)
    editor = Connection(
        reader,
        writer,
        agent.router(),
        name="acp",
        transport="stdio",
        framing="ndjson",
        cancel_method="$/cancel_request",
        cancel_key="requestId",
        sends_cancels=False,  # until the editor asks for them (see AcpAgent.initialize)
    )
    agent.editor = editor
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, editor.close_soon)
    serving = asyncio.create_task(editor.serve())
    try:
        while not serving.done():  # the editor's EOF stops runs still in flight
            await asyncio.wait({serving}, timeout=EOF_POLL)
            if reader.at_eof() and not serving.done():
                await editor.close()
    finally:
        await agent.close()
        writer.close()
    return 0
