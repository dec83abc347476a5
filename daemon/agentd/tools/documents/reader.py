"""``read`` of a notebook or a PDF. A notebook's bytes are read off the event loop (from the
editor when one serves the session's files), then rendered by :mod:`.notebook`; a PDF is
parsed in a child process by :mod:`.pdf`."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from functools import partial
from pathlib import Path

from agentd.protocol.document_details import ReadNotebookDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.defaults import NOTEBOOK_MAX_BYTES
from agentd.tools.documents import notebook
from agentd.tools.files.safeopen import read_bytes
from agentd.tools.files.truncate import Limits
from agentd.tools.net.heap import release_free_memory

TRIM_FROM_BYTES = 1024 * 1024
"""A notebook at least this large is followed by a trim of the C heap."""


async def read_document(
    path: Path, shown: str, window: tuple[int | None, int | None, str | None], ctx: ToolContext
) -> ToolResult:
    """The read result of the notebook or PDF at ``path`` (already resolved and checked);
    ``window`` is the read's ``offset``, ``limit`` and ``pages``."""
    offset, limit, pages = window
    if path.suffix.lower() == ".pdf":
        from agentd.tools.documents import pdf  # PDFs: the child process and its set-up

        return await pdf.read_pdf(path, shown, pages, ctx)
    if pages is not None:
        raise ToolError("`pages` is for PDFs; a notebook pages by cell with offset and limit.")
    data = await notebook_bytes(path, shown, ctx)
    limits = Limits.from_settings(ctx.settings)
    render = partial(
        notebook.render,
        shown=shown,
        offset=offset or 1,
        limit=limit,
        max_bytes=limits.max_bytes,
        max_image_bytes=ctx.settings.max_image_bytes,
        accept_images=ctx.settings.accept_images,
    )
    result = await asyncio.to_thread(_parse_and_render, data, shown, render)
    if isinstance(result.details, ReadNotebookDetails):
        result.details.path = str(path)
    return result


def _parse_and_render(
    data: bytes, shown: str, render: Callable[[notebook.Notebook], ToolResult]
) -> ToolResult:
    """Decode and render in one worker thread; after a large notebook, the memory its
    decoded cells took is handed back to the system once they are freed."""
    result = render(notebook.parse(data, shown))
    if len(data) >= TRIM_FROM_BYTES:
        del data
        gc.collect(0)
        release_free_memory()
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
