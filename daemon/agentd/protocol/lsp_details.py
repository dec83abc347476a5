"""What the ``lsp`` tool and the diagnostics after an edit report, for UIs.

:class:`LspDetails` is the ``lsp`` tool's member of
:data:`agentd.protocol.tool_details.ToolDetails`; :class:`LspDiagnostic` is one problem a
language server reported, as ``write``, ``edit``, ``undo_edit`` and an ``lsp`` rename carry
them (only the problems the change introduced). Lines and columns are 1-based, columns
counted in characters (code points), as the model sees them in ``read``.
"""

from __future__ import annotations

from typing import Literal

from agentd.protocol.base import Wire

PROBLEMS_HEADING = "New problems the language server reports"
"""How a change's result text introduces its new problems (clients find them by it)."""
Severity = Literal["error", "warning", "information", "hint"]
LspOperation = Literal[
    "definition",
    "references",
    "hover",
    "document_symbols",
    "workspace_symbols",
    "implementation",
    "incoming_calls",
    "outgoing_calls",
    "diagnostics",
    "rename",
]


class LspDiagnostic(Wire):
    """One problem in ``path`` at ``line``:``column`` (the range's start; ``end_line`` and
    ``end_column`` its end), from the server ``server``; ``code`` and ``source`` as the server
    gave them."""

    path: str
    line: int
    column: int
    severity: Severity
    message: str
    end_line: int | None = None
    end_column: int | None = None
    code: str | None = None
    source: str | None = None
    server: str | None = None


class LspItem(Wire):
    """One place an answer names: a location, a symbol, a caller or callee. ``name`` and
    ``kind`` for symbols and calls (``function``, ``class``…); ``text`` the source line."""

    path: str
    line: int
    column: int
    name: str | None = None
    kind: str | None = None
    text: str | None = None


class LspFileChange(Wire):
    """One file a rename changed: ``edits`` text edits, as a unified diff."""

    path: str
    edits: int
    diff: str


class LspDetails(Wire, tag="lsp", tag_field="type"):
    """An ``lsp`` call: which ``operation`` on which ``path`` (and position), answered by the
    server ``server``. ``items`` are the places of the answer (``total`` of them; ``truncated``
    when the list was cut); ``hover`` the hover text; ``diagnostics`` the file's problems
    (``diagnostics``) or those a rename introduced; ``changes`` the files a rename changed."""

    operation: LspOperation
    server: str | None
    path: str | None = None
    line: int | None = None
    column: int | None = None
    items: list[LspItem] = []
    total: int = 0
    truncated: bool = False
    hover: str | None = None
    diagnostics: list[LspDiagnostic] | None = None
    changes: list[LspFileChange] = []
    duration_ms: float = 0.0
