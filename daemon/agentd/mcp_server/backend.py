"""The native side of ``agentd mcp``: one JSON-RPC connection to agentd's session methods,
to a private daemon in this process (default) or to the shared daemon's socket
(``--shared``, started in the background when none runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from agentd import __version__
from agentd.protocol.methods import (
    ClientCapabilities,
    ClientInfo,
    InitializeParams,
    InitializeResult,
)
from agentd.rpc import Connection, Router
from agentd.rpc.connect import connect_unix, open_connection

STARTUP_TIMEOUT = 10.0
Close = Callable[[], Awaitable[None]]


async def open_backend(
    router: Router,
    *,
    shared: bool,
    socket_path: Path | None = None,
    config_file: Path | None = None,
) -> tuple[Connection, Close]:
    """An initialized native connection (``router`` gets the daemon's events and permission
    requests) and the function that closes it (and a private daemon's sessions)."""
    if shared:
        conn, close = await _shared(router, socket_path)
    else:
        conn, close = await _in_process(router, config_file)
    params = InitializeParams(
        client_info=ClientInfo(name="agentd-mcp", version=__version__),
        capabilities=ClientCapabilities(permissions=True),
    )
    try:
        await conn.request("initialize", params, result_type=InitializeResult)
    except BaseException:
        await close()
        raise
    return conn, close


async def _in_process(router: Router, config_file: Path | None) -> tuple[Connection, Close]:
    from agentd.daemon import DaemonOptions, build_daemon

    daemon = build_daemon(DaemonOptions(transport="stdio", config_file=config_file))
    ours, theirs = socket.socketpair()
    daemon_reader, daemon_writer = await asyncio.open_connection(sock=theirs)
    served = asyncio.create_task(
        daemon.attach(daemon_reader, daemon_writer, transport="memory", name="mcp")
    )
    reader, writer = await asyncio.open_connection(sock=ours)
    conn = open_connection(reader, writer, router, name="daemon", transport="memory")

    async def close() -> None:
        await daemon.sessions.close()  # runs cancelled, files flushed, MCP servers stopped
        await conn.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await served

    return conn, close


async def _shared(router: Router, socket_path: Path | None) -> tuple[Connection, Close]:
    from agentd import paths

    path = socket_path or paths.default_socket_path()
    try:
        conn = await connect_unix(path, router)
    except OSError:
        conn = await _start_shared(path, router)
    return conn, conn.close


async def _start_shared(path: Path, router: Router) -> Connection:
    """Start ``agentd serve --socket PATH`` detached and connect to it."""
    argv = [sys.executable, "-m", "agentd", "serve", "--socket", str(path)]
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=os.environ.copy(),
    )
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        try:
            return await connect_unix(path, router)
        except OSError as exc:
            status = process.poll()
            if status is not None or time.monotonic() > deadline:
                why = f"it exited with status {status}" if status is not None else "timed out"
                raise OSError(f"could not start the shared daemon on {path} ({why})") from exc
        await asyncio.sleep(0.02)
