"""The native side of ``agentd acp``: a JSON-RPC connection to agentd's session services.

The ACP front-end is a client of agentd's own protocol, like ``agentctl`` and the editor
plugins: every ACP request becomes native requests on one :class:`~agentd.rpc.Connection`.

- **In-process** (default): a private :class:`~agentd.daemon.Daemon` in this process,
  attached to one end of a socket pair (no file, no port); the connection is the other end.
  The daemon is built on first use, so ``initialize`` is answered before the agent, tools and
  providers are imported.
- **Shared** (``--shared``): the shared daemon's Unix socket (started in the background like
  ``agentctl`` does when none runs), so ACP sessions are the sessions the shell and the other
  editors see.
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
from dataclasses import dataclass
from pathlib import Path

from agentd import __version__
from agentd.protocol.methods import (
    ClientCapabilities,
    ClientInfo,
    FileAccessCapabilities,
    InitializeParams,
    InitializeResult,
)
from agentd.rpc import Connection, Router
from agentd.rpc.connect import connect_unix, open_connection

STARTUP_TIMEOUT = 10.0
"""Seconds to wait for a shared daemon started by ``agentd acp --shared``."""


@dataclass
class BackendOptions:
    """Where the sessions live: ``shared`` (the socket daemon) or a private daemon."""

    shared: bool = False
    socket_path: Path | None = None
    session_dir: Path | None = None
    config_file: Path | None = None
    log_level: str = "info"


@dataclass
class Backend:
    """An initialized native connection and how to close it."""

    conn: Connection
    close: Callable[[], Awaitable[None]]


async def open_backend(
    options: BackendOptions, router: Router, fs: FileAccessCapabilities
) -> Backend:
    """Connect (in-process or shared) and ``initialize``; ``router`` answers the daemon's
    requests (permissions, file access: ``fs`` says which) and receives its events."""
    if options.shared:
        backend = await _shared(options, router)
    else:
        backend = await _in_process(options, router)
    params = InitializeParams(
        client_info=ClientInfo(name="agentd-acp", version=__version__),
        capabilities=ClientCapabilities(permissions=True, fs=fs),
    )
    try:
        await backend.conn.request("initialize", params, result_type=InitializeResult)
    except BaseException:
        await backend.close()
        raise
    return backend


async def _in_process(options: BackendOptions, router: Router) -> Backend:
    await asyncio.to_thread(__import__, "agentd.session.manager")  # off the event loop
    from agentd.daemon import DaemonOptions, build_daemon

    daemon = build_daemon(
        DaemonOptions(
            transport="stdio",
            session_dir=options.session_dir,
            config_file=options.config_file,
            log_level=options.log_level,
        )
    )
    ours, theirs = socket.socketpair()
    daemon_reader, daemon_writer = await asyncio.open_connection(sock=theirs)
    served = asyncio.create_task(
        daemon.attach(daemon_reader, daemon_writer, transport="memory", name="acp")
    )
    reader, writer = await asyncio.open_connection(sock=ours)
    conn = open_connection(reader, writer, router, name="daemon", transport="memory")

    async def close() -> None:
        await daemon.sessions.close()  # runs cancelled, session files flushed
        await conn.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await served

    return Backend(conn, close)


async def _shared(options: BackendOptions, router: Router) -> Backend:
    from agentd import paths

    path = options.socket_path or paths.default_socket_path()
    try:
        conn = await connect_unix(path, router)
    except OSError:
        conn = await _start_shared(path, router)
    return Backend(conn, conn.close)


async def _start_shared(path: Path, router: Router) -> Connection:
    """Start ``agentd serve --socket PATH`` detached (its log: the daemon log) and connect."""
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
