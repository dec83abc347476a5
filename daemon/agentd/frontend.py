"""What a protocol front-end (``agentd acp``, ``agentd lsp``, ``agentd mcp``) was told, and
where its sessions live: one options Struct (:class:`FrontEndOptions`, built once by the
command line) and one function that opens the sessions (:func:`open_sessions`).

- **In-process** (default): a :class:`~agentd.session.service.SessionService` in this process
  (its session files in ``session_dir``, else the default folder). The session layer's modules
  are imported in a worker thread, so the event loop keeps answering the editor meanwhile.
- **Shared** (``--shared``): :class:`~agentd.api.RemoteSessions` on the shared daemon's Unix
  socket (``socket_path``, else the user's; started in the background when none answers,
  :func:`agentd.api.shared.open_shared`), so the shell and the other clients see the sessions.
  The front-end declares itself by name, answers approvals, and serves the editor's files
  when it says which it can (``fs``).

Either way the front-end gets a :class:`~agentd.api.SessionApi` and the function that closes
it (a private service cancels its runs, flushes its session files and stops its MCP servers).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from agentd.protocol.mcp import McpServerParam
from agentd.protocol.methods import FileAccessCapabilities, PermissionMode, SessionNewParams

if TYPE_CHECKING:
    from agentd.api import SessionApi

Close = Callable[[], Awaitable[None]]


class FrontEndOptions(msgspec.Struct, frozen=True, kw_only=True):
    """The options every front-end takes: where its sessions live and new sessions'
    defaults (None: the configuration's)."""

    shared: bool = False
    socket_path: Path | None = None
    """The shared daemon's socket (``--socket``; only with ``shared``)."""
    session_dir: Path | None = None
    """Where an in-process service keeps session files (``--session-dir``)."""
    config_file: Path | None = None
    provider: str | None = None
    model: str | None = None
    permission_mode: PermissionMode | None = None
    sandbox: Literal["workspace", "none"] | None = None
    """New sessions' sandbox (``--sandbox``; ``workspace`` is what ``auto`` mode needs)."""

    def new_session(
        self, cwd: str, mcp_servers: list[McpServerParam] | None = None
    ) -> SessionNewParams:
        """``session/new``'s params for a session in ``cwd`` with these defaults."""
        return SessionNewParams(
            cwd=cwd,
            provider=self.provider,
            model=self.model,
            permission_mode=self.permission_mode,
            sandbox=self.sandbox,
            mcp_servers=mcp_servers,
        )


class FrontEndSessions(msgspec.Struct, frozen=True):
    """A front-end's session API and the function that closes it."""

    api: SessionApi
    close: Close


async def open_sessions(
    options: FrontEndOptions, client_name: str, fs: FileAccessCapabilities | None = None
) -> FrontEndSessions:
    """The in-process service, or the shared daemon connected and initialized as
    ``client_name`` (declaring approvals and the file access ``fs``). OSError when the shared
    daemon cannot be reached or started; ``paths.UnsafeSocketError`` for a socket that is not
    the user's."""
    if options.shared:
        from agentd.api.shared import open_shared

        api, close = await open_shared(options.socket_path, client_name, fs)
        return FrontEndSessions(api, close)
    await asyncio.to_thread(__import__, "agentd.session.manager")  # off the event loop
    from agentd.session.service import SessionService

    service = SessionService(options.session_dir, options.config_file)
    return FrontEndSessions(service, service.close)
