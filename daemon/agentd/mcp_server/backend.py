"""Where ``agentd mcp``'s sessions live: the session API (:class:`agentd.api.SessionApi`),
in-process (a :class:`~agentd.session.service.SessionService` in this process, the default)
or shared (``--shared``: :class:`~agentd.api.RemoteSessions` over the shared daemon's Unix
socket, started in the background when none runs, so the shell and editors see the sessions).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentd import __version__
from agentd.api.shared import connect_shared
from agentd.protocol.methods import ClientCapabilities, ClientInfo, InitializeParams
from agentd.protocol.provider_env import provider_variables
from agentd.rpc import Router

if TYPE_CHECKING:
    from agentd.api import SessionApi

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
    conn = await connect_shared(socket_path, sessions.routes(Router()))
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
