"""Where ``agentd acp``'s sessions live: the session API, in-process or shared.

The ACP mapping talks to one :class:`~agentd.api.SessionApi` and passes one subscriber (the
:class:`~agentd.acp.relay.Relay`) with the calls that watch a session:

- **In-process** (default): a :class:`~agentd.session.service.SessionService` in this process.
  Calls are method calls (no socket); each event arrives as the session's one encoded JSON
  frame, decoded once by the relay (the session redacts every frame). The service is built
  on first use, so ``initialize`` is answered before the agent, tools and providers are
  imported.
- **Shared** (``--shared``): :class:`~agentd.api.RemoteSessions` over the shared daemon's Unix
  socket (started in the background like ``agentctl`` does when none runs), so ACP sessions are
  the sessions the shell and the other editors see. The same relay receives the daemon's events,
  permission requests and file requests through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.api.shared import open_shared
from agentd.protocol.methods import (
    FileAccessCapabilities,
)

if TYPE_CHECKING:
    from agentd.api import SessionApi


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
    sessions, close = await open_shared(options.socket_path, "agentd-acp", fs)
    return Backend(sessions, close)


async def _in_process(options: BackendOptions) -> Backend:
    await asyncio.to_thread(__import__, "agentd.session.manager")  # off the event loop
    from agentd.session.service import SessionService

    service = SessionService(options.session_dir, options.config_file)
    return Backend(service, service.close)  # close: runs cancelled, session files flushed
