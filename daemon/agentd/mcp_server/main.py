"""``agentd mcp``: the MCP server on stdin/stdout. The sessions live in a private daemon in
this process, or with ``--shared`` in the shared daemon (so the shell and editors see them).
stdout belongs to MCP; logs go to stderr or the log file."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import msgspec

from agentd.mcp_server.backend import open_backend
from agentd.mcp_server.server import build_server
from agentd.mcp_server.turns import Turns
from agentd.protocol.methods import PermissionMode, SessionNewParams


class McpOptions(msgspec.Struct):
    """What ``agentd mcp`` was told."""

    shared: bool = False
    socket_path: Path | None = None
    config_file: Path | None = None
    provider: str | None = None
    model: str | None = None
    permission_mode: PermissionMode | None = None
    roots: list[Path] = msgspec.field(default_factory=list)
    """The folders (real paths) ``agentd_run`` may work in, with their subfolders."""


async def serve(options: McpOptions) -> None:
    """Serve MCP on stdio until the client closes it."""
    turns = Turns()
    api, close = await open_backend(
        shared=options.shared, socket_path=options.socket_path, config_file=options.config_file
    )
    turns.api = api
    defaults = SessionNewParams(
        cwd="/",
        provider=options.provider,
        model=options.model,
        permission_mode=options.permission_mode,
    )
    try:
        await build_server(turns, defaults, options.roots).run_stdio_async()
    finally:
        await close()


def run(options: McpOptions, log_file: Path | None, log_level: str) -> int:
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
        asyncio.run(serve(options))
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        print(f"agentd mcp: {exc}", file=sys.stderr)
        return 1
    return 0
