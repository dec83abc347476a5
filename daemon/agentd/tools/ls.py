"""The ``ls`` tool: the entries of one directory.

Everything in the directory is listed, hidden and ignored entries included (unlike grep and
find), sorted by name; directories end with ``/`` and symbolic links show their target.
At most 500 entries; the result says how many were left out. The directory is opened
beneath the workspace (:func:`agentd.tools.files.safeopen.open_beneath`) and listed through that
descriptor, so a folder swapped for a symlink after the path check is refused, not listed.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import LsDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.files.paths import display_path, locate, resolve_path
from agentd.tools.files.safeopen import open_beneath


class LsParams(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[
        str | None, msgspec.Meta(description="Directory to list (default: the cwd).")
    ] = None


class LsTool:
    name: ClassVar[str] = "ls"
    description: ClassVar[str] = (
        "List a directory: entries sorted by name, hidden ones included, directories "
        "marked with a trailing '/', symlinks as 'name -> target'. At most "
        "{ls_max_entries} entries; it says how many more there are. Use find or grep to "
        "search recursively."
    )
    Params: ClassVar[type[LsParams]] = LsParams
    kind: ClassVar[ToolKind] = "read"
    mutating: ClassVar[bool] = False

    def locations(self, params: LsParams, ctx: ToolContext) -> list[Location]:
        return locate(params.path or ".", ctx)

    async def run(self, params: LsParams, ctx: ToolContext) -> ToolResult:
        root = resolve_path(params.path or ".", ctx)
        shown = display_path(root, ctx) if params.path else str(root)
        if not root.exists():
            raise ToolError(f"{shown} does not exist.")
        if not root.is_dir():
            raise ToolError(f"{shown} is a file, not a directory; use the read tool for files.")
        limit = ctx.settings.ls_max_entries
        entries, total = await asyncio.to_thread(list_entries, root, limit, ctx.workspace)
        details = LsDetails(path=str(root), count=total, truncated=total > len(entries))
        if not entries:
            return ToolResult(f"{shown} is empty.", details)
        text = "\n".join(entries)
        if total > len(entries):
            text += (
                f"\n[{total - len(entries)} more entries not shown ({limit}-entry limit). "
                "Use find with a pattern to narrow down.]"
            )
        return ToolResult(text, details)


def list_entries(root: Path, limit: int, workspace: Path | None = None) -> tuple[list[str], int]:
    """The first ``limit`` entries of ``root`` (sorted, formatted) and the total count;
    ``root`` is opened beneath ``workspace`` when set (ToolError if it leads outside)."""
    try:
        fd = open_beneath(root, workspace, os.O_RDONLY | os.O_DIRECTORY)
    except PermissionError:
        raise ToolError(f"Permission denied listing {root}.") from None
    except OSError as error:
        raise ToolError(f"Cannot list {root}: {error.strerror}.") from None
    try:
        with os.scandir(fd) as scan:
            items = sorted(scan, key=lambda item: item.name)
        return [_describe(item, fd) for item in items[:limit]], len(items)
    finally:
        os.close(fd)


def _describe(item: os.DirEntry[str], dir_fd: int) -> str:
    try:
        is_dir = item.is_dir()
    except OSError:
        is_dir = False
    suffix = "/" if is_dir else ""
    if item.is_symlink():
        try:
            return f"{item.name} -> {os.readlink(item.name, dir_fd=dir_fd)}{suffix}"
        except OSError:
            pass
    return item.name + suffix
