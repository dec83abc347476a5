"""Where ``agentd mcp``'s sessions live: the session API (:class:`agentd.api.SessionApi`),
in-process (a :class:`~agentd.session.service.SessionService` in this process, the default)
or shared (``--shared``: :class:`~agentd.api.RemoteSessions` over the shared daemon's Unix
socket, started in the background when none runs, so the shell and editors see the sessions).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentd import __version__, paths
from agentd.protocol.methods import ClientCapabilities, ClientInfo, InitializeParams
from agentd.protocol.provider_env import provider_variables
from agentd.rpc import Connection, Router
from agentd.rpc.connect import connect_unix

if TYPE_CHECKING:
    from agentd.api import SessionApi

STARTUP_TIMEOUT = 10.0
Close = Callable[[], Awaitable[None]]


async def open_backend(
    *, shared: bool, socket_path: Path | None = None, config_file: Path | None = None
) -> tuple[SessionApi, Close]:
    """The session API and the function that closes it (a private service's runs are
    cancelled, its files flushed and its MCP servers stopped)."""
    if not shared:
        from agentd.session.service import SessionService

        service = SessionService(None, config_file)
        return service, service.close
    from agentd.api.remote import RemoteSessions

    sessions = RemoteSessions(provider_env=provider_variables(os.environ))
    conn = await _connect_shared(socket_path, sessions.routes(Router()))
    sessions.attach(conn)
    params = InitializeParams(
        client_info=ClientInfo(name="agentd-mcp", version=__version__),
        capabilities=ClientCapabilities(permissions=True),
    )
    try:
        await sessions.request("initialize", params)
    except BaseException:
        await conn.close()
        raise
    return sessions, conn.close


async def _connect_shared(socket_path: Path | None, router: Router) -> Connection:
    path = socket_path or paths.default_socket_path()
    try:
        return await connect_unix(path, router)
    except paths.UnsafeSocketError:
        raise  # another user's folder or daemon: never start one there
    except OSError:
        return await _start_shared(path, router)


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
        except paths.UnsafeSocketError:
            raise
        except OSError as exc:
            status = process.poll()
            if status is not None or time.monotonic() > deadline:
                why = f"it exited with status {status}" if status is not None else "timed out"
                raise OSError(f"could not start the shared daemon on {path} ({why})") from exc
        await asyncio.sleep(0.02)
