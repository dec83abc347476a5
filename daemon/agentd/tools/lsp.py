"""The ``lsp`` tool: the project's language servers answer what a compiler knows.

One tool, operation-based: ``definition``, ``references``, ``hover``, ``implementation``,
``incoming_calls`` and ``outgoing_calls`` at a position; ``document_symbols`` and
``diagnostics`` of a file; ``workspace_symbols`` for a ``query``; ``rename`` to ``new_name``
(every file's change in one approval, recorded for undo and rewind). Positions are 1-based
as ``read`` shows them; ``symbol`` names the identifier on ``line`` instead of a column. The
work is the session's ``language_servers`` port (``agentd.langserver``); this module only
declares the tool. Reading, it needs no approval and runs in ``read-only`` mode, except
``rename`` (:meth:`LspTool.mutates`).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.lsp_details import LspOperation
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.files.paths import locate

POSITIONED = frozenset(
    {"definition", "references", "hover", "implementation", "incoming_calls", "outgoing_calls",
     "rename"}
)  # fmt: skip


class LspParams(msgspec.Struct, forbid_unknown_fields=True):
    operation: Annotated[LspOperation, msgspec.Meta(description="What to ask the language server.")]
    path: Annotated[
        str | None,
        msgspec.Meta(description="The file (relative to the cwd, or absolute); any file of the "
                     "project for workspace_symbols."),
    ] = None  # fmt: skip
    line: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        msgspec.Meta(description="1-based line, as read shows it."),
    ] = None
    column: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        msgspec.Meta(description="1-based column (characters) on that line."),
    ] = None
    symbol: Annotated[
        str | None,
        msgspec.Meta(description="The identifier on `line` to ask about (its first occurrence), "
                     "instead of a column."),
    ] = None  # fmt: skip
    query: Annotated[
        str | None, msgspec.Meta(description="workspace_symbols: the name (or part) to find.")
    ] = None
    new_name: Annotated[str | None, msgspec.Meta(description="rename: the new name.")] = None


class LspTool:
    name: ClassVar[str] = "lsp"
    description: ClassVar[str] = (
        "Ask the project's language server. Operations: definition, references, hover, "
        "implementation, incoming_calls, outgoing_calls (need path + line + symbol or column), "
        "document_symbols and diagnostics (path), workspace_symbols (query; path picks the "
        "language), rename (path + line + symbol/column + new_name: changes every file that "
        "uses it, undoable). Lines and columns are 1-based as read shows them; prefer `symbol` "
        "(the identifier on that line) to counting columns. Results are path:line:col with the "
        "source line. After write, edit and undo_edit the new problems the change introduced "
        "are reported in their results."
    )
    Params: ClassVar[type[LspParams]] = LspParams
    kind: ClassVar[ToolKind] = "search"
    mutating: ClassVar[bool] = False

    @staticmethod
    def mutates(args: dict[str, Any]) -> bool:
        """Whether a call with these arguments changes files (a rename): it then needs the
        approval a mutating tool needs."""
        return args.get("operation") == "rename"

    def locations(self, params: LspParams, ctx: ToolContext) -> list[Location]:
        if params.path is None:
            return []
        return locate(params.path, ctx, params.line)

    async def run(self, params: LspParams, ctx: ToolContext) -> ToolResult:
        check_params(params)
        servers = ctx.ports.language_servers
        if servers is None:
            raise ToolError("This session has no language servers.")
        return await servers.run(params, ctx)


def check_params(params: LspParams) -> None:
    """ToolError naming what an operation lacks."""
    if params.operation != "workspace_symbols" and params.path is None:
        raise ToolError(f"{params.operation} needs `path`.")
    if params.operation in POSITIONED and params.line is None:
        raise ToolError(f"{params.operation} needs `line` and `symbol` (or `column`).")
    if params.operation == "workspace_symbols" and not params.query:
        raise ToolError("workspace_symbols needs `query`.")
    if params.operation == "rename" and not params.new_name:
        raise ToolError("rename needs `new_name`.")
