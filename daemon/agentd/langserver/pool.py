"""The daemon's language servers: one :class:`~agentd.langserver.server.LanguageServer` per
(definition, project root, sandbox), shared by every session that asks for it; stopped after
:data:`IDLE_SECONDS` unused and when the daemon stops (:meth:`LspPool.close`)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentd.langserver.defs import ServerDef
from agentd.langserver.server import LanguageServer
from agentd.protocol.lifecycle import LanguageServerInfo

IDLE_SECONDS = 600.0
SWEEP_SECONDS = 30.0


class LspPool:
    """Language servers by (definition key, root, sandbox key)."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self.servers: dict[tuple[Any, ...], LanguageServer] = {}
        self._sweeper: asyncio.Task[None] | None = None

    def get(
        self,
        definition: ServerDef,
        root: Path,
        env: Mapping[str, str],
        sandbox: tuple[str, tuple[str, ...], tuple[int, ...]] | None = None,
    ) -> LanguageServer:
        """The server of ``definition`` for ``root`` (created, not started, when new).
        ``sandbox``: (session key, argv prefix, descriptors) of a sandboxed session: such a
        server is its own."""
        key = (definition.key, str(root), sandbox[0] if sandbox else None)
        server = self.servers.get(key)
        if server is None or server.state == "stopped":
            prefix, fds = (sandbox[1], sandbox[2]) if sandbox else ((), ())
            server = self.servers[key] = LanguageServer(definition, root, env, prefix, fds)
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.create_task(self._sweep())
        return server

    def running(
        self, definition: ServerDef, root: Path, sandbox_key: str | None
    ) -> LanguageServer | None:
        """The server :meth:`get` would give, when it is up (ready or indexing); None rather
        than creating or starting one. ``sandbox_key``: the session key of a sandboxed
        session, else None."""
        server = self.servers.get((definition.key, str(root), sandbox_key))
        if server is None or server.state not in ("ready", "indexing"):
            return None
        return server

    async def _sweep(self) -> None:
        while self.servers:
            await asyncio.sleep(min(SWEEP_SECONDS, self.idle_seconds))
            now = time.monotonic()
            for key, server in list(self.servers.items()):
                idle = server.busy == 0 and server.state not in ("starting", "indexing")
                if idle and now - server.used > self.idle_seconds:
                    del self.servers[key]
                    await server.stop()

    def infos(self) -> list[LanguageServerInfo]:
        """Every server of the pool, for ``daemon/status`` and ``agentctl lsp list``."""
        return [
            LanguageServerInfo(
                name=s.name,
                command=" ".join(s.definition.argv),
                root=str(s.root),
                state=s.state,
                pid=s.pid if s.state not in ("crashed", "stopped") else None,
                open_documents=len(s.documents),
                restarts=s.restarts,
                last_error=s.last_error,
            )
            for s in self.servers.values()
        ]

    async def close(self) -> None:
        """Stop every server (``shutdown``/``exit``, then a kill)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        servers, self.servers = list(self.servers.values()), {}
        await asyncio.gather(*(server.stop() for server in servers), return_exceptions=True)
