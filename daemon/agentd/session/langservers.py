"""A session's language servers: the tools' ``language_servers`` port, built lazily.

:class:`SessionLanguageServers` is given to every session whose configuration leaves it at
least one language server (:func:`available`: built-in definitions whose command is on
PATH, ``[language_servers.NAME]`` tables). Nothing of pygls, lsprotocol or agentd's LSP
client is imported until a call needs a server: an ``lsp`` call, or a change (``write``,
``edit``, ``undo_edit``) of a file a server serves; a change of any other file costs one
lookup of its name's ending. A ``read`` opens its file only in a server already running
(:mod:`agentd.langserver.reads`): it neither starts one nor imports the client before a
server exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentd.config.schema import LanguageServerSection
    from agentd.langserver.defs import ServerDef
    from agentd.langserver.session import LspSession
    from agentd.protocol.lsp_details import LspDiagnostic
    from agentd.session.shared import SharedResources
    from agentd.tools.base import ToolContext, ToolResult


def available(configured: Mapping[str, LanguageServerSection]) -> list[ServerDef]:
    """The language servers a session with these tables gets (commands found on PATH)."""
    from agentd.langserver.defs import definitions

    return definitions(configured)


class SessionLanguageServers:
    """The port (:class:`agentd.tools.base.LanguageServers`) for a session in ``cwd``."""

    def __init__(self, shared: SharedResources, defs: list[ServerDef], cwd: Path) -> None:
        self.shared, self.defs, self.cwd = shared, defs, cwd
        self._session: LspSession | None = None

    def _lsp(self) -> LspSession:
        if self._session is None:
            from agentd.langserver.session import LspSession

            self._session = LspSession(self.shared.lsp_pool(), self.defs, self.cwd)
        return self._session

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        return await self._lsp().run(params, ctx)

    async def rename_plan(self, params: Any, ctx: ToolContext) -> list[tuple[Path, str, str]]:
        return await self._lsp().rename_plan(params, ctx)

    async def changed(
        self, path: Path, before: bytes | None, after: bytes | None, ctx: ToolContext
    ) -> list[LspDiagnostic] | None:
        if not any(path.name.endswith(d.extensions) for d in self.defs):
            return None
        return await self._lsp().changed(path, before, after, ctx)

    async def opened(self, path: Path, ctx: ToolContext) -> None:
        if not any(path.name.endswith(d.extensions) for d in self.defs):
            return
        pool = self.shared.lsp_pool_if_any()
        if pool is None or not pool.servers:  # no server runs: nothing to tell
            return
        from agentd.langserver.reads import open_if_running

        await open_if_running(pool, self.defs, self.cwd, path, ctx)
