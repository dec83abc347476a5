"""The files the agent ``read``s, shared with the language servers already running for them.

A read opens (``didOpen``) the file in the server of its language when that server is up, or
brings it up to date (``didChange``/``didSave``) when it is already open, with the text the
agent sees (the editor's buffer when an editor serves files, else the disk), so later
diagnostics, definitions and references take it into account. A read never starts a server:
starting one costs seconds and a process, and a session that only reads would pay it for
nothing; the first ``lsp`` call or change of a file of that language starts it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from agentd.langserver import rename
from agentd.langserver.client import RequestFailed, ServerLost
from agentd.langserver.defs import ServerDef, root_for, server_for
from agentd.langserver.pool import LspPool
from agentd.log import get_logger
from agentd.tools.base import ToolContext, ToolError

MAX_OPEN_BYTES = 2 * 1024 * 1024
"""Largest file a read opens in a server (bigger ones wait for an ``lsp`` call)."""

log = get_logger(__name__)


async def open_if_running(
    pool: LspPool, defs: list[ServerDef], cwd: Path, path: Path, ctx: ToolContext
) -> bool:
    """Open ``path`` in its language's running server (see the module docstring); whether it
    did. Never raises: a read does not fail because of a language server."""
    definition = server_for(defs, path)
    if definition is None:
        return False
    sandbox_key = ctx.session_id if ctx.workspace is not None else None
    server = pool.running(definition, root_for(definition, path, cwd), sandbox_key)
    if server is None:
        return False
    with contextlib.suppress(OSError):
        if path.stat().st_size > MAX_OPEN_BYTES:
            return False
    try:
        await server.sync(path, await rename.read_text(path, ctx))
    except (ServerLost, RequestFailed, ToolError, OSError) as exc:
        log.info("read file not opened in its language server", server=server.name, error=str(exc))
        return False
    return True
