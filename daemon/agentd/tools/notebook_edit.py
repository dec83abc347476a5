"""The ``notebook_edit`` tool: replace, insert or delete one cell of a Jupyter notebook.

The edit is planned by :func:`plan_edit` (also what an approval's preview shows) and written
in one atomic write; the rest of the file is kept byte for byte (:mod:`.documents.cells`)
and the result must validate with nbformat. Like ``edit`` it refuses a notebook changed on
disk since the model last read it, goes through the editor when one serves the file, pushes
the previous bytes to the undo history (``undo_edit``) and reports the change for
``session/rewind``. nbformat is imported only when the tool runs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

import msgspec

from agentd.protocol.approval import ApprovalPreview
from agentd.protocol.document_details import NotebookEditDetails
from agentd.protocol.events import Location, ToolKind
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.files.fileio import atomic_write, check_fresh, record_stamp
from agentd.tools.files.history import history_for
from agentd.tools.files.locks import changing
from agentd.tools.files.paths import display_path, locate, resolve_path
from agentd.tools.files.protected import refuse_control

if TYPE_CHECKING:
    from agentd.tools.documents.cells import Located


class NotebookEditParams(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[
        str, msgspec.Meta(description="The .ipynb file (relative to the cwd, or absolute).")
    ]
    action: Annotated[
        Literal["replace", "insert", "delete"],
        msgspec.Meta(
            description="replace the cell's source, insert a new cell before it (or at the "
            "end when index is one past the last cell), or delete it."
        ),
    ] = "replace"
    cell_id: Annotated[str | None, msgspec.Meta(description="The cell's id, as read shows it.")] = (
        None
    )
    index: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        msgspec.Meta(description="The cell's 1-based position (instead of cell_id)."),
    ] = None
    cell_type: Annotated[
        Literal["code", "markdown", "raw"] | None,
        msgspec.Meta(description="Type of the new or replaced cell (default: code for a new "
                     "cell, the cell's own type for replace)."),
    ] = None  # fmt: skip
    source: Annotated[
        str | None, msgspec.Meta(description="The cell's new source (replace and insert).")
    ] = None


class NotebookPlan(msgspec.Struct, frozen=True):
    """What an edit does: the new bytes and the details of the change."""

    before: bytes
    after: bytes
    details: NotebookEditDetails
    old_source: str
    new_source: str


class NotebookEditTool:
    name: ClassVar[str] = "notebook_edit"
    description: ClassVar[str] = (
        "Edit one cell of a Jupyter notebook (.ipynb): replace its source, insert a new cell "
        "before it, or delete it. Name the cell by `cell_id` (as read shows it) or its 1-based "
        "`index`; to append, insert at index = number of cells + 1. Other cells and the "
        "notebook's metadata stay as they are; an edited code cell's outputs and execution "
        "count are cleared. Read the notebook first; an edit is refused if it changed on disk "
        "since you last read it. undo_edit reverts the last edit."
    )
    Params: ClassVar[type[NotebookEditParams]] = NotebookEditParams
    kind: ClassVar[ToolKind] = "edit"
    mutating: ClassVar[bool] = True

    def locations(self, params: NotebookEditParams, ctx: ToolContext) -> list[Location]:
        return locate(params.path, ctx)

    async def run(self, params: NotebookEditParams, ctx: ToolContext) -> ToolResult:
        async with changing(ctx, params.path):
            return await self._change(params, ctx)

    async def _change(self, params: NotebookEditParams, ctx: ToolContext) -> ToolResult:
        path = resolve_path(params.path, ctx)
        shown = display_path(path, ctx)
        refuse_control(path, ctx.workspace, shown)
        if path.suffix.lower() != ".ipynb":
            raise ToolError(f"{shown} is not a notebook (.ipynb); use edit for other files.")
        from agentd.tools.documents import reader  # notebooks: on first use

        editor_text = await ctx.files.read_text(path) if ctx.files is not None else None
        if editor_text is None:
            check_fresh(ctx, path, shown)
        data = await reader.notebook_bytes(path, shown, ctx)
        plan = await asyncio.to_thread(plan_edit, data, path, shown, params)
        written = ctx.files is not None and await ctx.files.write_text(
            path, plan.after.decode("utf-8", "surrogateescape")
        )
        if not written:
            await asyncio.to_thread(atomic_write, path, plan.after, ctx.workspace)
        history_for(ctx).push(path, plan.before)
        if ctx.changes is not None:
            await ctx.changes.changed(path, plan.before, plan.after)
        record_stamp(ctx, path)
        return ToolResult(_summary(plan.details, shown), plan.details)


def plan_edit(data: bytes, path: Path, shown: str, params: NotebookEditParams) -> NotebookPlan:
    """The edit ``params`` asks for on the notebook ``data`` (ToolError when it cannot be
    made or the result would not be a valid notebook). Blocking: run it in a thread."""
    from agentd.tools.documents import cells  # nbformat: on first use

    located = cells.locate(data, shown)
    cells.validate(data, shown, original=True)
    count = len(located.cells)
    if params.action == "insert" and params.cell_id is None and params.index == count + 1:
        position = count
    else:
        position = cells.find_cell(located, shown, params.cell_id, params.index)
    old = None if params.action == "insert" else located.cells[position]
    new = _new_cell(params, located, old)
    after = cells.splice(data, located, position, params.action, new)
    cells.validate(after, shown)
    target = new if new is not None else old
    assert target is not None
    old_source, new_source = cells.source_of(old), cells.source_of(new)
    details = _details(params, path, shown, position, target, old, (old_source, new_source))
    details.cells = count + {"insert": 1, "delete": -1}.get(params.action, 0)
    return NotebookPlan(data, after, details, old_source, new_source)


def _new_cell(
    params: NotebookEditParams, located: Located, old: dict[str, object] | None
) -> dict[str, object] | None:
    from agentd.tools.documents import cells

    if params.action == "delete":
        return None
    if params.source is None:
        raise ToolError(f"{params.action} needs `source`: the cell's new text.")
    kind = params.cell_type or (str(old.get("cell_type")) if old is not None else "code")
    return cells.new_cell(kind, params.source, located.minor, old)


def _details(
    params: NotebookEditParams,
    path: Path,
    shown: str,
    position: int,
    target: dict[str, object],
    old: dict[str, object] | None,
    sources: tuple[str, str],
) -> NotebookEditDetails:
    from agentd.tools.files.diffs import summarize_change

    summary = summarize_change(sources[0], sources[1], f"{shown}#cell{position + 1}")
    had_outputs = bool(old and (old.get("outputs") or old.get("execution_count") is not None))
    cell_id = target.get("id")
    return NotebookEditDetails(
        path=str(path),
        action=params.action,
        index=position + 1,
        cell_id=cell_id if isinstance(cell_id, str) else None,
        cell_type=str(target.get("cell_type")),
        diff=summary.diff,
        added=summary.added,
        removed=summary.removed,
        cells=0,
        outputs_cleared=params.action == "replace" and had_outputs,
    )


def _summary(details: NotebookEditDetails, shown: str) -> str:
    verb = {"replace": "Replaced", "insert": "Inserted", "delete": "Deleted"}[details.action]
    named = f" (id {details.cell_id})" if details.cell_id else ""
    text = f"{verb} {details.cell_type} cell {details.index}{named} of {shown}"
    text += f" (+{details.added} −{details.removed}); the notebook now has {details.cells} cells."
    if details.outputs_cleared:
        text += " Its outputs and execution count were cleared."
    return text


async def notebook_preview(args: dict[str, object], ctx: ToolContext) -> ApprovalPreview:
    """What an approval shows for a ``notebook_edit`` call: the cell's source diff, or why
    the call would fail (``error``)."""
    raw = args.get("path")
    shown: str | None = raw if isinstance(raw, str) else None
    try:
        params = msgspec.convert(args, NotebookEditParams)
        path = resolve_path(params.path, ctx)
        shown = display_path(path, ctx)
        if path.suffix.lower() != ".ipynb":
            raise ToolError(f"{shown} is not a notebook (.ipynb).")
        from agentd.tools.documents import reader

        data = await reader.notebook_bytes(path, shown, ctx)
        plan = await asyncio.to_thread(plan_edit, data, path, shown, params)
    except (ToolError, msgspec.ValidationError, OSError) as error:
        return ApprovalPreview(kind="diff", path=shown, error=str(error))
    details = plan.details
    return ApprovalPreview(
        kind="diff",
        path=f"{shown}#cell{details.index}",
        diff=details.diff,
        created=params.action == "insert",
        added=details.added,
        removed=details.removed,
    )
