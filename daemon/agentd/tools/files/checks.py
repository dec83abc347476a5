"""The new problems a change introduced, as the file's language server sees them: what
``write``, ``edit`` and ``undo_edit`` add to their results (the session's
``language_servers`` port does the asking, see :class:`~agentd.tools.base.LanguageServers`).
"""

from __future__ import annotations

from pathlib import Path

from agentd.protocol.lsp_details import PROBLEMS_HEADING, LspDiagnostic
from agentd.tools.base import ToolContext, ToolResult
from agentd.tools.files.paths import display_path

MAX_SHOWN = 20
"""Problems listed in a result's text at most (the rest counted)."""
_RANK = {"error": 0, "warning": 1, "information": 2, "hint": 3}


async def new_problems(
    ctx: ToolContext, path: Path, before: bytes | None, after: bytes | None
) -> list[LspDiagnostic] | None:
    """The problems the change introduced, most severe first (None: no server checked the
    file, or the session waits for none: ``diagnostics_wait_ms = 0``)."""
    servers = ctx.ports.language_servers
    if servers is None or ctx.settings.diagnostics_wait_ms <= 0:
        return None
    found = await servers.changed(path, before, after, ctx)
    return None if found is None else sorted_problems(found)


def sorted_problems(found: list[LspDiagnostic]) -> list[LspDiagnostic]:
    return sorted(found, key=lambda d: (_RANK.get(d.severity, 4), d.path, d.line, d.column))


def problems_text(found: list[LspDiagnostic] | None, shown: str | None = None) -> str:
    """The lines a result gets for ``found`` (empty when there are none): one per problem,
    ``path:line:col: severity: message``, at most :data:`MAX_SHOWN`."""
    if not found:
        return ""
    lines = [f"\n\n{PROBLEMS_HEADING} ({len(found)}):"]
    for item in found[:MAX_SHOWN]:
        where = shown if shown is not None else item.path
        code = f" [{item.code}]" if item.code else ""
        lines.append(f"{where}:{item.line}:{item.column}: {item.severity}: {item.message}{code}")
    if len(found) > MAX_SHOWN:
        lines.append(f"… and {len(found) - MAX_SHOWN} more")
    return "\n".join(lines)


async def with_problems(
    ctx: ToolContext, result: ToolResult, path: Path, before: bytes | None, after: bytes | None
) -> ToolResult:
    """``result`` of a change of ``path`` with the new problems in its text and its
    ``details.diagnostics`` (unchanged when no server checked the file)."""
    found = await new_problems(ctx, path, before, after)
    if found is None:
        return result
    if result.details is not None and hasattr(result.details, "diagnostics"):
        result.details.diagnostics = found
    if isinstance(result.output, str):
        result.output += problems_text(found, display_path(path, ctx))
    return result
