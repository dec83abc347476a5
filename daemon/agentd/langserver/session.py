"""One session's use of the language servers: the tools' ``language_servers`` port
(:class:`~agentd.tools.base.LanguageServers`) over the daemon's :class:`~agentd.langserver.
pool.LspPool`.

Each call finds the server of its file (:func:`~agentd.langserver.defs.server_for`; none: a
plain result naming the configured servers), syncs the file's text as the agent sees it (the
editor's buffer when an editor serves files, else the disk), converts the 1-based position
(or ``symbol``) to the server's encoding and renders the answer (:mod:`agentd.langserver.
render`). In a sandboxed session paths are checked like every file tool's and the server
runs under the same sandbox as bash (:func:`agentd.tools.bash.confinement`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from agentd.langserver import rename
from agentd.langserver.changes import new_problems
from agentd.langserver.client import RequestFailed, ServerLost
from agentd.langserver.defs import ServerDef, root_for, server_for
from agentd.langserver.pool import LspPool
from agentd.langserver.positions import human, lines_of, position
from agentd.langserver.render import (
    MAX_ITEMS,
    SourceLines,
    call_items,
    diagnostic_items,
    hover_text,
    items_text,
    location_items,
    symbol_items,
)
from agentd.langserver.server import Document, LanguageServer
from agentd.log import get_logger
from agentd.protocol.lsp_details import PROBLEMS_HEADING, LspDetails, LspDiagnostic, LspItem
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.bash import confinement
from agentd.tools.files.checks import problems_text, sorted_problems
from agentd.tools.files.paths import display_path, resolve_path
from agentd.tools.lsp import LspParams
from agentd.tools.process.environment import child_env

log = get_logger("agentd.langserver")
REQUEST_TIMEOUT = 60.0
_HEADINGS = {
    "definition": "Definition",
    "references": "References",
    "implementation": "Implementations",
    "document_symbols": "Symbols",
    "workspace_symbols": "Symbols",
    "incoming_calls": "Callers",
    "outgoing_calls": "Calls",
}


_PROVIDERS = {
    "definition": "definition_provider",
    "references": "references_provider",
    "hover": "hover_provider",
    "document_symbols": "document_symbol_provider",
    "workspace_symbols": "workspace_symbol_provider",
    "implementation": "implementation_provider",
    "incoming_calls": "call_hierarchy_provider",
    "outgoing_calls": "call_hierarchy_provider",
    "rename": "rename_provider",
}
"""The server capability each operation needs."""


class LspSession:
    """The language servers of a session in ``cwd`` (``defs``: its definitions)."""

    def __init__(self, pool: LspPool, defs: list[ServerDef], cwd: Path) -> None:
        self.pool, self.defs, self.cwd = pool, defs, cwd
        self.shown = rename.ShownPlans()

    def server(self, path: Path, ctx: ToolContext) -> LanguageServer | None:
        definition = server_for(self.defs, path)
        if definition is None:
            return None
        env = {**child_env(None, ctx.settings), **dict(definition.env)}
        sandbox = None
        if ctx.workspace is not None:
            ruleset, prefix, fds = confinement(ctx, env)
            if ruleset is not None or not prefix:
                raise ToolError(
                    "This sandboxed session cannot confine a language server here "
                    "(bubblewrap is not available)."
                )
            sandbox = (ctx.session_id, tuple(prefix), tuple(fds))
            env["XDG_CACHE_HOME"] = f"{env['TMPDIR']}/cache"  # home is read-only
        return self.pool.get(definition, root_for(definition, path, self.cwd), env, sandbox)

    def _none_for(self, path: Path) -> ToolResult:
        listed = "; ".join(f"{d.name} ({', '.join(d.extensions)})" for d in self.defs) or "none"
        text = f"No language server serves {path.name}. Servers available: {listed}."
        return ToolResult(text, LspDetails(operation="diagnostics", server=None, path=str(path)))

    async def run(self, params: LspParams, ctx: ToolContext) -> ToolResult:
        started = time.monotonic()
        path = resolve_path(params.path, ctx) if params.path else self._any_file()
        server = self.server(path, ctx) if path is not None else None
        if server is None or path is None:
            return self._none_for(path or self.cwd)
        try:
            result = await self._run(server, path, params, ctx)
        except ServerLost as exc:
            raise ToolError(f"The language server {server.name} is not available: {exc}") from None
        except RequestFailed as exc:
            raise ToolError(f"The language server {server.name}: {exc}") from None
        except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
            log.warning("language server answer not understood", server=server.name, error=str(exc))
            raise ToolError(f"The language server {server.name} sent a malformed answer.") from None
        if isinstance(result.details, LspDetails):
            result.details.duration_ms = round((time.monotonic() - started) * 1000, 2)
        return result

    def _any_file(self) -> Path | None:
        """For a workspace_symbols call without a path: a name the first server serves."""
        return self.cwd / f"_{self.defs[0].extensions[0]}" if self.defs else None

    async def _run(
        self, server: LanguageServer, path: Path, params: LspParams, ctx: ToolContext
    ) -> ToolResult:
        operation = params.operation
        await server.ready()
        offered = _PROVIDERS.get(operation)
        if offered is not None and not getattr(server.capabilities, offered, None):
            raise ToolError(
                f"{server.name} does not offer {operation} (it serves {path.name}); "
                "use grep or read instead."
            )
        details = LspDetails(
            operation=operation,
            server=server.name,
            path=params.path and display_path(path, ctx),
            line=params.line,
            column=params.column,
        )
        if operation == "workspace_symbols":
            if params.path is not None:  # the server learns of the project through it
                await server.sync(path, await rename.read_text(path, ctx))
            found = await server.request(
                types.WORKSPACE_SYMBOL,
                types.WorkspaceSymbolParams(query=params.query or ""),
                REQUEST_TIMEOUT,
            )
            sources = SourceLines(lambda uri: _open_text(server, uri))
            return _listed(
                details,
                symbol_items(found, "", sources, server.encoding, lambda p: display_path(p, ctx)),
            )
        text = await rename.read_text(path, ctx)
        document = await server.sync(path, text)
        lines = lines_of(text)
        if operation == "diagnostics":
            return await self._diagnostics(server, path, document, lines, details, ctx)
        sources = SourceLines(lambda uri: _open_text(server, uri))
        sources.cache[path.as_uri()] = lines

        def shown(p: Path) -> str:
            return display_path(p, ctx)

        ident = types.TextDocumentIdentifier(uri=path.as_uri())
        if operation == "document_symbols":
            found = await server.request(
                types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
                types.DocumentSymbolParams(text_document=ident),
                REQUEST_TIMEOUT,
            )
            return _listed(details, symbol_items(found, ident.uri, sources, server.encoding, shown))
        assert params.line is not None
        at = position(lines, params.line, params.column, params.symbol, server.encoding)
        details.column = details.column or _column(lines, at, server.encoding)
        if operation == "hover":
            found = await server.request(
                types.TEXT_DOCUMENT_HOVER,
                types.HoverParams(text_document=ident, position=at),
                REQUEST_TIMEOUT,
            )
            details.hover = hover_text(found)
            return ToolResult(details.hover or "No hover information there.", details)
        if operation == "rename":
            return await self._rename(server, path, at, params, details, ctx)
        if operation in ("incoming_calls", "outgoing_calls"):
            found = await self._calls(server, ident, at, operation == "incoming_calls")
            items = call_items(
                found, operation == "incoming_calls", sources, server.encoding, shown
            )
            return _listed(details, items)
        method = {
            "definition": types.TEXT_DOCUMENT_DEFINITION,
            "implementation": types.TEXT_DOCUMENT_IMPLEMENTATION,
            "references": types.TEXT_DOCUMENT_REFERENCES,
        }[operation]
        request: Any = (
            types.ReferenceParams(
                text_document=ident,
                position=at,
                context=types.ReferenceContext(include_declaration=True),
            )
            if operation == "references"
            else types.DefinitionParams(text_document=ident, position=at)
        )
        found = await server.request(method, request, REQUEST_TIMEOUT)
        return _listed(details, location_items(found, sources, server.encoding, shown))

    async def _calls(
        self,
        server: LanguageServer,
        ident: types.TextDocumentIdentifier,
        at: types.Position,
        incoming: bool,
    ) -> Any:
        items = await server.request(
            types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY,
            types.CallHierarchyPrepareParams(text_document=ident, position=at),
            REQUEST_TIMEOUT,
        )
        if not items:
            return []
        if incoming:
            return await server.request(
                types.CALL_HIERARCHY_INCOMING_CALLS,
                types.CallHierarchyIncomingCallsParams(item=items[0]),
                REQUEST_TIMEOUT,
            )
        return await server.request(
            types.CALL_HIERARCHY_OUTGOING_CALLS,
            types.CallHierarchyOutgoingCallsParams(item=items[0]),
            REQUEST_TIMEOUT,
        )

    async def _diagnostics(
        self,
        server: LanguageServer,
        path: Path,
        document: Document,
        lines: list[str],
        details: LspDetails,
        ctx: ToolContext,
    ) -> ToolResult:
        wait = max(ctx.settings.diagnostics_wait_ms, 1000) / 1000
        found = server.diagnostics.get(path.as_uri())
        if found is None or (found[0] is not None and found[0] < document.version):
            fresh = await server.diagnostics_of(path, document, 0.0, wait)
            raw = fresh if fresh is not None else (found[1] if found else [])
        else:
            raw = found[1]
        shown = display_path(path, ctx)
        items = sorted_problems(diagnostic_items(raw, lines, server.encoding, shown, server.name))
        details.diagnostics = items
        if not items:
            return ToolResult(f"{shown}: the language server reports no problems.", details)
        return ToolResult(
            problems_text(items).replace(PROBLEMS_HEADING, f"Problems in {shown}").lstrip(),
            details,
        )

    async def _rename(
        self,
        server: LanguageServer,
        path: Path,
        at: types.Position,
        params: LspParams,
        details: LspDetails,
        ctx: ToolContext,
    ) -> ToolResult:
        planned = await self._plan(server, path, at, params, ctx)
        if not planned:
            raise ToolError("The server's rename changes nothing (is the position on a name?).")
        self.shown.check(ctx.tool_call_id, planned, ctx)
        details.changes = await rename.apply(planned, ctx)
        checked = await new_problems(server, [(p, b, a) for p, b, a in planned], ctx)
        details.diagnostics = sorted_problems([d for found in checked for d in found or []])
        files = len(details.changes)
        text = f"Renamed to {params.new_name} in {files} file{'s' if files != 1 else ''}:\n"
        text += "\n".join(f"  {c.path} (+{c.edits})" for c in details.changes)
        return ToolResult(text + problems_text(details.diagnostics), details)

    async def _plan(
        self,
        server: LanguageServer,
        path: Path,
        at: types.Position,
        params: LspParams,
        ctx: ToolContext,
    ) -> rename.Planned:
        ident = types.TextDocumentIdentifier(uri=path.as_uri())
        edit = await server.request(
            types.TEXT_DOCUMENT_RENAME,
            types.RenameParams(text_document=ident, position=at, new_name=params.new_name or ""),
            REQUEST_TIMEOUT,
        )
        return await rename.plan(edit, server.encoding, ctx)

    async def rename_plan(self, params: LspParams, ctx: ToolContext) -> rename.Planned:
        """What the rename ``params`` would change now, for the approval preview; remembered
        for the call ``ctx.tool_call_id`` (a preview that failed as an empty plan), so that the
        approved call writes only what was shown (:class:`rename.ShownPlans`)."""
        planned: rename.Planned = []
        try:
            planned = await self._preview_plan(params, ctx)
        finally:
            self.shown.remember(ctx.tool_call_id, planned)
        return planned

    async def _preview_plan(self, params: LspParams, ctx: ToolContext) -> rename.Planned:
        if params.path is None or params.line is None:
            raise ToolError("rename needs path, line and symbol (or column).")
        path = resolve_path(params.path, ctx)
        server = self.server(path, ctx)
        if server is None:
            raise ToolError(f"No language server serves {path.name}.")
        text = await rename.read_text(path, ctx)
        await server.sync(path, text)
        at = position(lines_of(text), params.line, params.column, params.symbol, server.encoding)
        try:
            return await self._plan(server, path, at, params, ctx)
        except (ServerLost, RequestFailed) as exc:
            raise ToolError(f"The language server {server.name}: {exc}") from None

    async def changed(
        self, path: Path, before: bytes | None, after: bytes | None, ctx: ToolContext
    ) -> list[LspDiagnostic] | None:
        try:
            server = self.server(path, ctx)
        except ToolError:
            return None
        if server is None or after is None:
            return None
        old = None if before is None else before.decode("utf-8", "surrogateescape")
        return await self._new_problems(
            server, path, old, after.decode("utf-8", "surrogateescape"), ctx
        )

    async def _new_problems(
        self, server: LanguageServer, path: Path, before: str | None, after: str, ctx: ToolContext
    ) -> list[LspDiagnostic] | None:
        """The problems of ``after`` that ``before`` did not have (:mod:`.changes`)."""
        return (await new_problems(server, [(path, before, after)], ctx))[0]


def _open_text(server: LanguageServer, uri: str) -> str | None:
    document = server.documents.get(uri)
    return document.text if document is not None else None


def _column(lines: list[str], at: types.Position, encoding: str) -> int:
    return human(lines, at, encoding)[1]


def _listed(details: LspDetails, items: list[LspItem]) -> ToolResult:
    details.total, details.truncated = len(items), len(items) > MAX_ITEMS
    details.items = items[:MAX_ITEMS]
    heading = _HEADINGS.get(details.operation, details.operation)
    return ToolResult(items_text(items, heading), details)
