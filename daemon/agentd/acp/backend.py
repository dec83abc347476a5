"""Where ``agentd acp``'s sessions live: the session API, in-process or shared.

The ACP mapping talks to one :class:`~agentd.api.SessionApi` and passes one subscriber (the
:class:`~agentd.acp.relay.Relay`) with the calls that watch a session:

- **In-process** (default): a :class:`~agentd.session.service.SessionService` in this process.
  Calls are method calls and events arrive as the live objects (no socket, no JSON between the
  mapping and the session). The service is built on first use, so ``initialize`` is answered
  before the agent, tools and providers are imported.
- **Shared** (``--shared``): :class:`~agentd.api.RemoteSessions` over the shared daemon's Unix
  socket (started in the background like ``agentctl`` does when none runs), so ACP sessions are
  the sessions the shell and the other editors see. The same relay receives the daemon's events,
  permission requests and file requests through it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentd import __version__, paths
from agentd.protocol.methods import (
    ClientCapabilities,
    ClientInfo,
    FileAccessCapabilities,
    InitializeParams,
)
from agentd.protocol.provider_env import provider_variables
from agentd.rpc import Connection, Router
from agentd.rpc.connect import connect_unix

if TYPE_CHECKING:
    from agentd.api import SessionApi

STARTUP_TIMEOUT = 10.0
"""Seconds to wait for a shared daemon started by ``agentd acp --shared``."""


@dataclass
class BackendOptions:
    """Where the sessions live: ``shared`` (the socket daemon) or in this process."""

    shared: bool = False
    socket_path: Path | None = None
    session_dir: Path | None = None
    config_file: Path | None = None
    log_level: str = "info"


@dataclass
class Backend:
    """The session API and how to close it."""

    sessions: SessionApi
    close: Callable[[], Awaitable[None]]


async def open_backend(options: BackendOptions, fs: FileAccessCapabilities) -> Backend:
    """The in-process service, or the shared daemon connected and initialized (declaring
    permissions and the editor's file access ``fs``)."""
    if not options.shared:
        return await _in_process(options)
    from agentd.api.remote import RemoteSessions  # --shared only: not on the start-up path

    sessions = RemoteSessions(provider_env=provider_variables(os.environ))
    conn = await _connect_shared(options, sessions.routes(Router()))
    sessions.attach(conn)
    params = InitializeParams(
        client_info=ClientInfo(name="agentd-acp", version=__version__),
        capabilities=ClientCapabilities(permissions=True, fs=fs),
    )
    try:
        await sessions.request("initialize", params)
    except BaseException:
        await conn.close()
        raise
    return Backend(sessions, conn.close)


async def _in_process(options: BackendOptions) -> Backend:
    await asyncio.to_thread(__import__, "agentd.session.manager")  # off the event loop
    from agentd.session.service import SessionService

    service = SessionService(options.session_dir, options.config_file)
    return Backend(service, service.close)  # close: runs cancelled, session files flushed


async def _connect_shared(options: BackendOptions, router: Router) -> Connection:
    path = options.socket_path or paths.default_socket_path()
    try:
        return await connect_unix(path, router)
    except paths.UnsafeSocketError:
        raise  # another user's folder or daemon: never start one there
    except OSError:
        return await _start_shared(path, router)


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
        except paths.UnsafeSocketError:
            raise
        except OSError as exc:
            status = process.poll()
            if status is not None or time.monotonic() > deadline:
                why = f"it exited with status {status}" if status is not None else "timed out"
                raise OSError(f"could not start the shared daemon on {path} ({why})") from exc
        await asyncio.sleep(0.02)
