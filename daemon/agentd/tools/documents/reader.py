"""``read`` of a notebook: the bytes are read off the event loop (from the editor when one
serves the session's files), then rendered by :mod:`.notebook`."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentd.protocol.document_details import ReadNotebookDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.defaults import NOTEBOOK_MAX_BYTES
from agentd.tools.documents import notebook
from agentd.tools.files.safeopen import read_bytes
from agentd.tools.files.truncate import Limits


async def read_document(
    path: Path, shown: str, window: tuple[int | None, int | None, str | None], ctx: ToolContext
) -> ToolResult:
    """The read result of the notebook at ``path`` (already resolved and checked);
    ``window`` is the read's ``offset``, ``limit`` and ``pages``."""
    offset, limit, pages = window
    if pages is not None:
        raise ToolError("`pages` is for PDFs; a notebook pages by cell with offset and limit.")
    data = await notebook_bytes(path, shown, ctx)
    limits = Limits.from_settings(ctx.settings)
    parsed = await asyncio.to_thread(notebook.parse, data, shown)
    result = notebook.render(
        parsed,
        shown,
        offset or 1,
        limit,
        max_bytes=limits.max_bytes,
        max_image_bytes=ctx.settings.max_image_bytes,
        accept_images=ctx.settings.accept_images,
    )
    if isinstance(result.details, ReadNotebookDetails):
        result.details.path = str(path)
    return result


async def notebook_bytes(path: Path, shown: str, ctx: ToolContext) -> bytes:
    """The notebook's bytes: the editor's buffer when it serves the file, else the disk
    (beneath the workspace when sandboxed); ToolError over :data:`NOTEBOOK_MAX_BYTES`."""
    text = await ctx.files.read_text(path) if ctx.files is not None else None
    if text is not None:
        data = text.encode("utf-8", "surrogateescape")
    else:
        size = path.stat().st_size
        if size > NOTEBOOK_MAX_BYTES:
            raise ToolError(
                f"{shown} is {size} bytes, over the {NOTEBOOK_MAX_BYTES}-byte notebook limit. "
                "Inspect it with bash (e.g. `jq '.cells | length' PATH`)."
            )
        data = await asyncio.to_thread(read_bytes, path, ctx.workspace)
    if len(data) > NOTEBOOK_MAX_BYTES:
        raise ToolError(f"{shown} is over the {NOTEBOOK_MAX_BYTES}-byte notebook limit.")
    return data
