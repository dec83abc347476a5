"""``agentd mcp``: the MCP server on stdin/stdout. The sessions live in a private daemon in
this process, or with ``--shared`` in the shared daemon (so the shell and editors see them).
stdout belongs to MCP; logs go to stderr or the log file."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from agentd.frontend import FrontEndOptions, open_sessions
from agentd.mcp_server.server import build_server
from agentd.mcp_server.turns import Turns


async def serve(options: FrontEndOptions, roots: list[Path]) -> None:
    """Serve MCP on stdio until the client closes it; ``agentd_run`` works only in ``roots``
    (real paths, their subfolders too)."""
    turns = Turns()
    opened = await open_sessions(options, "agentd-mcp")
    turns.api = opened.api
    try:
        await build_server(turns, options.new_session("/"), roots).run_stdio_async()
    finally:
        await opened.close()


def run(options: FrontEndOptions, roots: list[Path], log_file: Path | None, log_level: str) -> int:
    """Serve MCP on this process's stdio; return the exit code."""
    from agentd import log as logging_setup
    from agentd.hardening import make_undumpable

    make_undumpable()  # like the daemon: commands bash runs cannot read our memory (keys)
    try:
        logging_setup.configure(log_level, log_file)
    except (ValueError, OSError) as exc:
        print(f"agentd mcp: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(options, roots))
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        print(f"agentd mcp: {exc}", file=sys.stderr)
        return 1
    return 0
