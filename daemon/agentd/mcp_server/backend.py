"""Where ``agentd mcp``'s sessions live: the session API (:class:`agentd.api.SessionApi`),
in-process (a :class:`~agentd.session.service.SessionService` in this process, the default)
or shared (``--shared``: :class:`~agentd.api.RemoteSessions` over the shared daemon's Unix
socket, started in the background when none runs, so the shell and editors see the sessions).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.api.shared import open_shared

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
    sessions, close = await open_shared(socket_path, "agentd-mcp")
    return sessions, close
