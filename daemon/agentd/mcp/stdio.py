"""The stdio transport to an MCP server, without the SDK: the server's stdin/stdout carry
newline-delimited JSON-RPC, which agentd's own :mod:`agentd.rpc` speaks (requests,
notifications, ``notifications/cancelled`` for a request whose caller was cancelled, the
server's ``ping``). The SDK costs a noticeable slice of a second to import (seconds on a
loaded machine: ``bench_mcp``), more than the whole budget of a session's first server, so
stdio servers never import it; streamable HTTP servers use it.

On exit stdin is closed, the server gets :data:`GRACE_SECONDS` to leave, then SIGTERM, then
SIGKILL. The server starts with a tool-run marker in its environment
(:func:`agentd.tools.process.proctree.marked_env`), so the processes it starts are ended with
the daemon and cannot drive it (:mod:`agentd.tools.process.peers`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from agentd.rpc import Connection, Router
from agentd.rpc.connect import open_connection
from agentd.tools.process.proctree import marked_env

GRACE_SECONDS = 2.0
MAX_LINE = 64 * 1024 * 1024


@contextlib.asynccontextmanager
async def open_stdio(
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path,
    stderr: int,
    on_notification: Callable[[str], None],
    on_progress: Callable[[Any], None],
) -> AsyncIterator[Connection]:
    """Spawn ``argv`` (stderr to the descriptor ``stderr``) and yield a JSON-RPC connection
    on its pipes; ``on_notification`` gets the method of each server notification,
    ``on_progress`` the params of each ``notifications/progress``. OSError when it cannot be
    spawned."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=marked_env(env),  # its children are found and ended with the daemon's
        cwd=cwd,
        limit=MAX_LINE,
    )
    assert process.stdout is not None
    assert process.stdin is not None
    router = Router()
    router.add("ping", _pong, Any)
    for method in ("notifications/tools/list_changed", "notifications/message"):
        router.on_notification(method, _notified(on_notification, method), Any)
    router.on_notification("notifications/progress", lambda _conn, params: on_progress(params), Any)
    conn = open_connection(
        process.stdout,
        process.stdin,
        router,
        name=f"mcp-{Path(argv[-1]).name}",
        transport="stdio",
        cancel_method="notifications/cancelled",
        cancel_key="requestId",
    )
    try:
        yield conn
    finally:
        await asyncio.shield(_stop(process, conn))


def _pong(conn: Connection, params: Any) -> dict[str, Any]:
    return {}


def _notified(callback: Callable[[str], None], method: str) -> Callable[[Connection, Any], None]:
    def handler(conn: Connection, params: Any) -> None:
        callback(method)

    return handler


async def _stop(process: asyncio.subprocess.Process, conn: Connection) -> None:
    """Close the connection and stdin, wait a little, then SIGTERM and SIGKILL."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(conn.close(), GRACE_SECONDS)
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    for signal_it in (None, process.terminate, process.kill):
        if signal_it is not None:
            with contextlib.suppress(ProcessLookupError):
                signal_it()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), GRACE_SECONDS)
            return
