"""Where ``agentd lsp``'s sessions live: the session API (:class:`agentd.api.SessionApi`)
in this process (a :class:`~agentd.session.service.SessionService`, the default) or, with
``--shared``, :class:`~agentd.api.RemoteSessions` on the shared daemon's Unix socket
(started in the background when none runs), so ``agentctl attach`` and the other clients see
the editor's sessions. Opened on the first command, after ``initialize``: the editor's
capabilities decide the file access declared to the shared daemon.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.api.shared import open_shared
from agentd.protocol.methods import (
    FileAccessCapabilities,
)

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
    sessions, close = await open_shared(socket_path, "agentd-lsp", fs)
    return sessions, close
