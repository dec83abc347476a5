"""``agentd mcp``: the MCP server on stdin/stdout, or with ``--http`` on streamable HTTP
(:mod:`agentd.mcp_server.streamable`). The sessions live in a private daemon in this
process, or with ``--shared`` in the shared daemon (so the shell and editors see them).

stdout belongs to MCP. Hosts show the server's stderr as errors, so logging keeps it for
warnings and errors: everything at the chosen level goes to the log file (``--log-file``,
default ``$XDG_STATE_HOME/agentd/mcp.log``). The host's ``initialize`` is answered first:
the sessions (the session layer's imports, or the shared daemon reached or started) are opened
on the first tool call, and structlog is set up a second after start (events are kept until
then; a warning writes them at once).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import msgspec

from agentd.frontend import FrontEndOptions, open_sessions
from agentd.mcp_server import streamable
from agentd.mcp_server.server import build_server
from agentd.mcp_server.turns import Turns
from agentd.paths import state_dir

READY_AFTER = 1.0
"""Seconds after start when the kept log events are written."""


class HttpOptions(msgspec.Struct, frozen=True, kw_only=True):
    """``--http HOST:PORT`` and its rules: ``--allow-remote``, ``--token-file``."""

    host: str
    port: int
    allow_remote: bool = False
    token_file: Path | None = None


async def serve(
    options: FrontEndOptions, roots: list[Path], http: HttpOptions | None = None
) -> None:
    """Serve MCP on stdio until the client closes it, or on ``http`` until SIGTERM/SIGINT;
    ``agentd_run`` works only in ``roots`` (real paths, their subfolders too).
    :class:`~agentd.mcp_server.streamable.HttpRefused` when ``http`` cannot start."""
    from agentd import log as logging_setup

    loop = asyncio.get_running_loop()
    loop.call_later(READY_AFTER, logging_setup.ready)
    turns = Turns(lambda: open_sessions(options, "agentd-mcp"))
    try:
        app = build_server(turns, options.new_session("/"), roots)
        if http is None:
            await app.run_stdio_async()
        else:
            await _serve_http(app, http)
    finally:
        await turns.close()
        logging_setup.ready()


async def _serve_http(app: object, http: HttpOptions) -> None:
    token, token_file = streamable.token_for(http.token_file)
    sock = streamable.bind(http.host, http.port, allow_remote=http.allow_remote)
    await streamable.serve_http(app, sock, token, token_file)


def default_log_file() -> Path:
    """``$XDG_STATE_HOME/agentd/mcp.log``."""
    return state_dir() / "mcp.log"


def run(
    options: FrontEndOptions,
    roots: list[Path],
    log_file: Path | None,
    log_level: str,
    http: HttpOptions | None = None,
) -> int:
    """Serve MCP on this process's stdio (or ``http``); return the exit code."""
    from agentd import log as logging_setup
    from agentd.hardening import make_undumpable

    make_undumpable()  # like the daemon: commands bash runs cannot read our memory (keys)
    try:
        logging_setup.configure(
            log_level, log_file or default_log_file(), deferred=True, stderr_level="warning"
        )
    except (ValueError, OSError) as exc:
        print(f"agentd mcp: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(options, roots, http))
    except KeyboardInterrupt:
        return 130
    except streamable.HttpRefused as exc:
        print(f"agentd mcp: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"agentd mcp: {exc}", file=sys.stderr)
        return 1
    return 0
