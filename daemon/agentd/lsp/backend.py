"""Where ``agentd lsp``'s sessions live: the session API (:class:`agentd.api.SessionApi`)
in this process (a :class:`~agentd.session.service.SessionService`, the default) or, with
``--shared``, :class:`~agentd.api.RemoteSessions` on the shared daemon's Unix socket
(started in the background when none runs), so ``agentctl attach`` and the other clients see
the editor's sessions. Opened on the first command, after ``initialize``: the editor's
capabilities decide the file access declared to the shared daemon.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentd import __version__
from agentd.api.shared import connect_shared
from agentd.protocol.methods import (
    ClientCapabilities,
    ClientInfo,
    FileAccessCapabilities,
    InitializeParams,
)
from agentd.protocol.provider_env import provider_variables
from agentd.rpc import Router

if TYPE_CHECKING:
    from agentd.api import SessionApi

Close = Callable[[], Awaitable[None]]


async def open_backend(
    *,
    shared: bool,
    fs: FileAccessCapabilities,
    socket_path: Path | None = None,
    config_file: Path | None = None,
) -> tuple[SessionApi, Close]:
    """The session API and the function that closes it (a private service's runs are
    cancelled and its session files flushed)."""
    if not shared:
        await asyncio.to_thread(__import__, "agentd.session.manager")  # off the event loop
        from agentd.session.service import SessionService

        service = SessionService(None, config_file)
        return service, service.close
    from agentd.api.remote import RemoteSessions

    sessions = RemoteSessions(provider_env=provider_variables(os.environ))
    conn = await connect_shared(socket_path, sessions.routes(Router()))
    sessions.attach(conn)
    params = InitializeParams(
        client_info=ClientInfo(name="agentd-lsp", version=__version__),
        capabilities=ClientCapabilities(permissions=True, fs=fs),
    )
    try:
        await sessions.request("initialize", params)
    except BaseException:
        await conn.close()
        raise
    return sessions, conn.close
