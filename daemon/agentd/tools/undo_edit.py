"""The ``undo_edit`` tool: revert the last write or edit of a file by this session.

Snapshots come from the per-session history (:mod:`agentd.tools.files.history`); a file the
undone write had created is deleted. Repeated calls step further back. The result shows the
diff from the current content to the restored one. With an editor attached (``ctx.files``) a
text restore goes through the editor (the buffer and its undo history); a deletion and what
the editor declines go to the disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import UndoEditDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.files.checks import with_problems
from agentd.tools.files.diffs import summarize_change
from agentd.tools.files.fileio import atomic_write, encode_text, looks_binary, record_stamp
from agentd.tools.files.history import Snapshot, history_for
from agentd.tools.files.locks import changing
from agentd.tools.files.paths import display_path, locate, resolve_path
from agentd.tools.files.protected import refuse_control
from agentd.tools.files.safeopen import parent_dir, read_bytes


class UndoEditParams(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[str, msgspec.Meta(description="File whose last write or edit to revert.")]


class UndoEditTool:
    name: ClassVar[str] = "undo_edit"
    description: ClassVar[str] = (
        "Revert the last write or edit you made to a file in this session, restoring its "
        "previous content (a file that write created is deleted). Call again to step further "
        "back (up to {undo_max_per_file} steps per file)."
    )
    Params: ClassVar[type[UndoEditParams]] = UndoEditParams
    kind: ClassVar[ToolKind] = "edit"
    mutating: ClassVar[bool] = True

    def locations(self, params: UndoEditParams, ctx: ToolContext) -> list[Location]:
        return locate(params.path, ctx)

    async def run(self, params: UndoEditParams, ctx: ToolContext) -> ToolResult:
        async with changing(ctx, params.path):  # one change of a file at a time
            return await self._change(params, ctx)

    async def _change(self, params: UndoEditParams, ctx: ToolContext) -> ToolResult:
        path = resolve_path(params.path, ctx)
        shown = display_path(path, ctx)
        refuse_control(path, ctx.workspace, shown)
        history = history_for(ctx)
        snapshot = history.pop(path)
        if snapshot is None:
            raise ToolError(f"There is no write or edit of {shown} to undo in this session.")
        served = await _restore_in_editor(path, snapshot, ctx)
        if isinstance(served, _NotServed):
            current = await asyncio.to_thread(_restore, path, snapshot, ctx.workspace)
        else:
            current = served
        if ctx.changes is not None:
            await ctx.changes.changed(path, current, snapshot.content)
        record_stamp(ctx, path)
        details = UndoEditDetails(
            path=str(path), deleted=snapshot.content is None, remaining=history.depth(path)
        )
        if snapshot.content is None:
            text = f"Deleted {shown}: it did not exist before the write being undone."
            return ToolResult(text, details)
        assert not isinstance(current, _NotServed)
        old, new = current or b"", snapshot.content
        if not looks_binary(old) and not looks_binary(new):
            summary = summarize_change(
                old.decode("utf-8", "surrogateescape"),
                new.decode("utf-8", "surrogateescape"),
                shown,
                created=current is None,
            )
            details.diff, details.first_changed_line = summary.diff, summary.first_changed_line
            details.added, details.removed = summary.added, summary.removed
        steps = details.remaining
        text = f"Restored {shown} to its content before the last change ({steps} more undo steps)."
        return await with_problems(ctx, ToolResult(text, details), path, current, new)


class _NotServed:
    """The editor did not take the restore: it goes to the disk."""


_NOT_SERVED = _NotServed()


async def _restore_in_editor(
    path: Path, snapshot: Snapshot, ctx: ToolContext
) -> bytes | _NotServed | None:
    """Put a text ``snapshot`` back through the editor (``ctx.files``: it lands in the
    buffer and its undo history); the content the editor had, or :data:`_NOT_SERVED` when
    the session has no editor, the snapshot is a deletion or binary, or the editor declines."""
    files = ctx.files
    if files is None or snapshot.content is None or looks_binary(snapshot.content):
        return _NOT_SERVED
    old = await files.read_text(path) if path.exists() else None
    if old is None and path.exists():
        return _NOT_SERVED  # the editor does not hold it: the disk is read and written
    if not await files.write_text(path, snapshot.content.decode("utf-8", "surrogateescape")):
        return _NOT_SERVED
    return None if old is None else encode_text(old)


def _restore(path: Path, snapshot: Snapshot, workspace: Path | None) -> bytes | None:
    """Put ``snapshot`` back; return the content that was there (None if absent). With a
    workspace, every access goes beneath it (:mod:`agentd.tools.files.safeopen`)."""
    try:
        current: bytes | None = read_bytes(path, workspace)
    except FileNotFoundError:
        current = None
    if snapshot.content is None:
        with parent_dir(path, workspace) as dir_fd, contextlib.suppress(FileNotFoundError):
            os.unlink(path.name if dir_fd is not None else path, dir_fd=dir_fd)
        return current
    atomic_write(path, snapshot.content, workspace)
    return current
