"""The ``edit`` tool: exact string replacement in an existing file, one or several at once.

All replacements of one call are applied in order (each to the result of the previous one)
and written in a single atomic write; when any fails, the file is not touched. A file changed
on disk since the model last read it (its stamp differs) is refused. Details carry a unified
diff, the first changed line and added/removed line counts. With an editor attached
(``ctx.files``) the edit reads the editor's buffer and writes through the editor; what the
editor does not serve takes the same descriptor-based path as without one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import EditDetails
from agentd.tools.base import FileAccess, ToolContext, ToolError, ToolResult
from agentd.tools.files.checks import with_problems
from agentd.tools.files.diffs import DiffSummary, summarize_change
from agentd.tools.files.edit_match import Replacement, apply_edits
from agentd.tools.files.fileio import (
    atomic_write,
    check_fresh,
    encode_text,
    read_text_for_edit,
    record_stamp,
)
from agentd.tools.files.history import history_for
from agentd.tools.files.locks import changing
from agentd.tools.files.paths import display_path, locate, resolve_path
from agentd.tools.files.protected import refuse_control

_OLD = "Exact text to replace, including whitespace and indentation; must match exactly once "
_OLD += "unless replace_all is true."


class EditItem(msgspec.Struct, forbid_unknown_fields=True):
    """One replacement of a batch."""

    old_string: Annotated[str, msgspec.Meta(description=_OLD)]
    new_string: Annotated[str, msgspec.Meta(description="The text to put in its place.")]
    replace_all: Annotated[
        bool, msgspec.Meta(description="Replace every occurrence of old_string.")
    ] = False


class EditParams(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[
        str, msgspec.Meta(description="File to edit (relative to the cwd, or absolute).")
    ]
    old_string: Annotated[str | None, msgspec.Meta(description=_OLD)] = None
    new_string: Annotated[str | None, msgspec.Meta(description="The text to put in its place.")] = (
        None
    )
    replace_all: Annotated[
        bool, msgspec.Meta(description="Replace every occurrence of old_string.")
    ] = False
    edits: Annotated[
        list[EditItem] | None,
        msgspec.Meta(
            description="Several replacements applied in order in one atomic write "
            "(instead of old_string/new_string)."
        ),
    ] = None


class _Outcome(msgspec.Struct, frozen=True):
    previous: bytes
    written: bytes
    replacements: int
    summary: DiffSummary


class EditTool:
    name: ClassVar[str] = "edit"
    description: ClassVar[str] = (
        "Replace exact text in an existing file. old_string must match the file exactly "
        "(whitespace and indentation included) and exactly once, unless replace_all is true. "
        "For several changes to one file pass `edits` (a list of {{old_string, new_string, "
        "replace_all}}), applied in order in one atomic write; if any fails nothing is "
        "written. Read the file first; an edit is refused if the file changed on disk since "
        "you last read it. undo_edit reverts the last edit."
    )
    Params: ClassVar[type[EditParams]] = EditParams
    kind: ClassVar[ToolKind] = "edit"
    mutating: ClassVar[bool] = True

    def locations(self, params: EditParams, ctx: ToolContext) -> list[Location]:
        return locate(params.path, ctx)

    async def run(self, params: EditParams, ctx: ToolContext) -> ToolResult:
        async with changing(ctx, params.path):  # one change of a file at a time
            return await self._change(params, ctx)

    async def _change(self, params: EditParams, ctx: ToolContext) -> ToolResult:
        replacements = replacements_of(params)
        path = resolve_path(params.path, ctx)
        shown = display_path(path, ctx)
        refuse_control(path, ctx.workspace, shown)
        files = ctx.files
        text = await files.read_text(path) if files is not None else None
        if files is None or text is None:
            check_fresh(ctx, path, shown)
            outcome = await asyncio.to_thread(_edit, path, shown, replacements, ctx.workspace)
        else:  # the editor's buffer is the truth: no stale check against the disk
            outcome = await _edit_in_editor(files, path, text, replacements, ctx)
        history_for(ctx).push(path, outcome.previous)
        if ctx.changes is not None:
            await ctx.changes.changed(path, outcome.previous, outcome.written)
        record_stamp(ctx, path)
        summary = outcome.summary
        plural = "s" if outcome.replacements != 1 else ""
        text = (
            f"Edited {shown}: {outcome.replacements} replacement{plural} "
            f"(+{summary.added} −{summary.removed}), first change at line "
            f"{summary.first_changed_line}."
        )
        details = EditDetails(
            path=str(path),
            replacements=outcome.replacements,
            diff=summary.diff,
            first_changed_line=summary.first_changed_line,
            added=summary.added,
            removed=summary.removed,
        )
        return await with_problems(
            ctx, ToolResult(text, details), path, outcome.previous, outcome.written
        )


def replacements_of(params: EditParams) -> list[Replacement]:
    """The replacements an edit call asks for (ToolError when the arguments are inconsistent)."""
    single = params.old_string is not None or params.new_string is not None
    if params.edits is not None:
        if single:
            raise ToolError("Give either old_string/new_string or edits, not both.")
        if not params.edits:
            raise ToolError("edits is empty; give at least one {old_string, new_string}.")
        return [Replacement(e.old_string, e.new_string, e.replace_all) for e in params.edits]
    if params.old_string is None or params.new_string is None:
        raise ToolError("Give both old_string and new_string (or a list of edits).")
    return [Replacement(params.old_string, params.new_string, params.replace_all)]


async def _edit_in_editor(
    files: FileAccess, path: Path, text: str, replacements: list[Replacement], ctx: ToolContext
) -> _Outcome:
    """Apply the edits to the editor's text and write the result back through the editor;
    when the editor does not take the write, to the disk beneath the workspace (when
    sandboxed), as without an editor."""
    shown = display_path(path, ctx)
    new_text, count = apply_edits(text, replacements, shown)
    written = encode_text(new_text)
    if not await files.write_text(path, new_text):
        await asyncio.to_thread(atomic_write, path, written, ctx.workspace)
    return _Outcome(encode_text(text), written, count, summarize_change(text, new_text, shown))


def _edit(
    path: Path, shown: str, replacements: list[Replacement], workspace: Path | None = None
) -> _Outcome:
    previous, text = read_text_for_edit(path, shown, workspace)
    new_text, count = apply_edits(text, replacements, shown)
    written = encode_text(new_text)
    atomic_write(path, written, workspace)
    return _Outcome(previous, written, count, summarize_change(text, new_text, shown))
