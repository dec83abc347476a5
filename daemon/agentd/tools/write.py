"""The ``write`` tool: create or overwrite a file atomically.

Parent directories are created; the write goes through a temp file and a rename in the same
directory; an existing file keeps its permission bits. The previous content is pushed to the
undo history and the read stamp is refreshed, so an edit right after a write is not "stale".
With an editor attached (``ctx.files``) the file is written through the editor; whatever
the editor does not serve takes the same descriptor-based path as without one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import WriteDetails
from agentd.tools.base import FileAccess, ToolContext, ToolError, ToolResult
from agentd.tools.files.checks import with_problems
from agentd.tools.files.diffs import summarize_change
from agentd.tools.files.fileio import atomic_write, encode_text, looks_binary, record_stamp
from agentd.tools.files.history import history_for
from agentd.tools.files.locks import changing
from agentd.tools.files.paths import display_path, locate, resolve_path
from agentd.tools.files.protected import refuse_control
from agentd.tools.files.safeopen import make_dirs_beneath, read_bytes
from agentd.tools.files.truncate import count_lines

MAX_DIFF_SOURCE_BYTES = 2 * 1024 * 1024


class WriteParams(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[
        str, msgspec.Meta(description="File to write (relative to the cwd, or absolute).")
    ]
    content: Annotated[str, msgspec.Meta(description="The complete new content of the file.")]


class WriteTool:
    name: ClassVar[str] = "write"
    description: ClassVar[str] = (
        "Write a file: creates it (and missing parent directories) or replaces its whole "
        "content. The write is atomic and keeps an existing file's permissions. Prefer the "
        "edit tool for changing part of an existing file. undo_edit reverts the last write."
    )
    Params: ClassVar[type[WriteParams]] = WriteParams
    kind: ClassVar[ToolKind] = "edit"
    mutating: ClassVar[bool] = True

    def locations(self, params: WriteParams, ctx: ToolContext) -> list[Location]:
        return locate(params.path, ctx)

    async def run(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        async with changing(ctx, params.path):  # one change of a file at a time
            return await self._change(params, ctx)

    async def _change(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        path = resolve_path(params.path, ctx)
        shown = display_path(path, ctx)
        refuse_control(path, ctx.workspace, shown)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory; give a file path.")
        data = encode_text(params.content)
        if ctx.files is None:
            previous = await asyncio.to_thread(_write, path, shown, data, ctx.workspace)
        else:
            previous = await _write_in_editor(ctx.files, path, shown, params.content, ctx)
        history_for(ctx).push(path, previous)
        if ctx.changes is not None:
            await ctx.changes.changed(path, previous, data)
        record_stamp(ctx, path)
        verb = "Created" if previous is None else "Overwrote"
        lines = count_lines(params.content)
        details = WriteDetails(
            path=str(path), created=previous is None, bytes=len(data), lines=lines
        )
        _add_diff(details, previous, params.content, shown)
        result = ToolResult(f"{verb} {shown} ({len(data)} bytes, {lines} lines).", details)
        return await with_problems(ctx, result, path, previous, data)


async def _write_in_editor(
    files: FileAccess, path: Path, shown: str, text: str, ctx: ToolContext
) -> bytes | None:
    """Write through the editor; the previous content as the editor had it (None for a new
    file). Whatever the editor does not serve goes to the disk through the same
    descriptor-based path as a session without an editor (beneath the workspace when
    sandboxed): the previous content, the parent folders and, when the editor does not take
    the write, the write itself."""
    workspace = ctx.workspace
    previous: bytes | None = None
    if path.exists():
        old = await files.read_text(path)
        if old is not None:
            previous = encode_text(old)
        else:
            previous = await asyncio.to_thread(_previous, path, shown, workspace)
    await asyncio.to_thread(_make_parents, path, shown, workspace)
    if not await files.write_text(path, text):
        await asyncio.to_thread(_replace, path, shown, encode_text(text), workspace)
    return previous


def _write(path: Path, shown: str, data: bytes, workspace: Path | None) -> bytes | None:
    """Write ``data``; return the previous content (None when the file did not exist)."""
    previous = _previous(path, shown, workspace)
    _replace(path, shown, data, workspace)
    return previous


def _previous(path: Path, shown: str, workspace: Path | None) -> bytes | None:
    """The current content of ``path`` (None when it does not exist), opened beneath the
    workspace when sandboxed."""
    try:
        return read_bytes(path, workspace)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise ToolError(f"Cannot create {shown}: a parent path exists and is a file.") from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a directory; give a file path.") from None


def _make_parents(path: Path, shown: str, workspace: Path | None) -> None:
    """Create the missing parent folders (each beneath the workspace when sandboxed)."""
    try:
        if workspace is None:
            path.parent.mkdir(parents=True, exist_ok=True)
        else:
            make_dirs_beneath(path.parent, workspace)
    except (FileExistsError, NotADirectoryError):
        raise ToolError(f"Cannot create {shown}: a parent path exists and is a file.") from None


def _replace(path: Path, shown: str, data: bytes, workspace: Path | None) -> None:
    """:func:`atomic_write` (beneath the workspace when sandboxed), errors for the model."""
    try:
        atomic_write(path, data, workspace)
    except (FileExistsError, NotADirectoryError):
        raise ToolError(f"Cannot create {shown}: a parent path exists and is a file.") from None


def _add_diff(details: WriteDetails, previous: bytes | None, content: str, shown: str) -> None:
    """Set the diff and +/- counts for UIs; ``diff_omitted`` for big or binary old content."""
    old = b"" if previous is None else previous
    too_big = len(old) > MAX_DIFF_SOURCE_BYTES or len(content) > MAX_DIFF_SOURCE_BYTES
    if too_big or looks_binary(old):
        details.diff_omitted = True
        return
    summary = summarize_change(
        old.decode("utf-8", "surrogateescape"), content, shown, created=previous is None
    )
    details.diff, details.first_changed_line = summary.diff, summary.first_changed_line
    details.added, details.removed = summary.added, summary.removed
