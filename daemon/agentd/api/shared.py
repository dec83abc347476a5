"""The shared daemon for front-ends that relay to it (``agentd acp --shared``, ``agentd mcp
--shared``): connect to its socket, or start it and connect.

The socket is checked like every client checks it (:func:`agentd.rpc.connect.connect_unix`: a
folder of this user's, a listener of this user's); a refused socket is never answered by
starting a daemon there.
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
    from agentd.api.remote import RemoteSessions
    from agentd.protocol.methods import FileAccessCapabilities

Close = Callable[[], Awaitable[None]]

STARTUP_TIMEOUT = 10.0
"""Seconds a started daemon may take to accept connections."""


async def connect_shared(socket_path: Path | None, router: Router) -> Connection:
    """A connection to the shared daemon on ``socket_path`` (default: the user's socket),
    started detached when none answers; OSError when it cannot be started,
    ``paths.UnsafeSocketError`` when the socket is not the user's."""
    path = socket_path or paths.default_socket_path()
    try:
        return await connect_unix(path, router)
    except paths.UnsafeSocketError:
        raise  # another user's folder or daemon: never start one there
    except OSError:
        return await _start(path, router)


async def open_shared(
    socket_path: Path | None, client_name: str, fs: FileAccessCapabilities | None = None
) -> tuple[RemoteSessions, Close]:
    """The shared daemon's sessions for a front-end that relays to it (``--shared``):
    connected (:func:`connect_shared`), initialized as ``client_name`` answering approvals
    (and serving the editor's files when ``fs`` says so), with the caller's provider
    variables; and the function that closes the connection. The connection is closed when
    ``initialize`` fails."""
    from agentd.api.remote import RemoteSessions  # --shared only: not on the start-up path

    sessions = RemoteSessions(provider_env=provider_variables(os.environ))
    conn = await connect_shared(socket_path, sessions.routes(Router()))
    sessions.attach(conn)
    # questions: the front-end's watchers that can show them do; the others answer with an
    # error, which tells the daemon that nobody here can be asked
    capabilities = ClientCapabilities(permissions=True, questions=True)
    if fs is not None:
        capabilities = ClientCapabilities(permissions=True, questions=True, fs=fs)
    params = InitializeParams(
        client_info=ClientInfo(name=client_name, version=__version__), capabilities=capabilities
    )
    try:
        await sessions.request("initialize", params)
    except BaseException:
        await conn.close()
        raise
    return sessions, conn.close


async def _start(path: Path, router: Router) -> Connection:
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
