"""``read`` of a PDF: text per page with page markers; a page with no text layer (a scan)
is sent to a vision model as an image, or named as image-only for a text model.

The parse runs in a child process (:mod:`.pdfwork`: pypdf for text, pypdfium2 to render
scans), never on the event loop nor in the daemon's memory: the child gets the file as an
open descriptor (opened beneath the workspace when sandboxed), an address-space limit of
:data:`CHILD_MEMORY` and ``ctx.settings.pdf_timeout`` seconds (30 by default); it dies with
the daemon and is killed when the call is cancelled. At most
:data:`~agentd.tools.defaults.PDF_MAX_PAGES` pages and the result byte limit per call; the
result says where to continue.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from agentd.protocol.content import ImageContent, TextContent, UserContent
from agentd.protocol.document_details import ReadPdfDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.defaults import PDF_MAX_BYTES, PDF_MAX_IMAGES, PDF_MAX_PAGES
from agentd.tools.files.safeopen import open_read
from agentd.tools.files.truncate import Limits
from agentd.tools.process.orphans import die_with_parent

CHILD_MEMORY = 1024 * 1024 * 1024
"""Address space the parsing child may use (bytes)."""
_PAGES = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d*)\s*)?$")
_WORKER = Path(__file__).with_name("pdfwork.py")


class _Item(msgspec.Struct):
    page: int
    text: str
    scan: bool = False
    image: str | None = None


class _Answer(msgspec.Struct):
    pages: int = 0
    items: list[_Item] = []
    cut: str | None = None
    error: str | None = None


def page_range(pages: str | None, shown: str) -> tuple[int, int | None]:
    """``"3"`` → (3, 3), ``"3-5"`` → (3, 5), ``"3-"`` → (3, None), None → (1, None)."""
    if pages is None:
        return 1, None
    match = _PAGES.match(pages)
    if match is None or int(match[1]) < 1:
        raise ToolError(f'pages must look like "3" or "3-5" (1-based), not {pages!r}.')
    first = int(match[1])
    if match[2] is None:
        return first, first if "-" not in pages else None
    last = int(match[2]) if match[2] else None
    if last is not None and last < first:
        raise ToolError(f"pages {pages!r}: the last page comes before the first.")
    return first, last


async def read_pdf(path: Path, shown: str, pages: str | None, ctx: ToolContext) -> ToolResult:
    """The read result of the PDF at ``path`` (already resolved and checked)."""
    first, last = page_range(pages, shown)
    size = path.stat().st_size
    if size > PDF_MAX_BYTES:
        raise ToolError(
            f"{shown} is {size} bytes, over the {PDF_MAX_BYTES}-byte limit for PDFs. Extract "
            "what you need with bash (e.g. `pdftotext -f 1 -l 5 PATH -`) if it is installed."
        )
    request = {
        "first": first,
        "last": last,
        "max_pages": PDF_MAX_PAGES,
        "max_bytes": Limits.from_settings(ctx.settings).max_bytes,
        "render": ctx.settings.accept_images,
        "max_images": PDF_MAX_IMAGES,
        "max_image_bytes": ctx.settings.max_image_bytes,
        "seconds": ctx.settings.pdf_timeout / 2,
        "memory": CHILD_MEMORY,
    }
    answer = await _run_child(path, shown, request, ctx.workspace, ctx.settings.pdf_timeout)
    if answer.error is not None:
        raise ToolError(f"{shown}: {answer.error}.")
    return _result(path, shown, answer, last, rendered=ctx.settings.accept_images)


async def _run_child(
    path: Path, shown: str, request: dict[str, Any], workspace: Path | None, timeout: float
) -> _Answer:
    file = await asyncio.to_thread(open_read, path, workspace)
    request["fd"] = file.fileno()
    with file:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-I", str(_WORKER),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, cwd="/", env={"PATH": os.defpath},
            pass_fds=(file.fileno(),), preexec_fn=partial(_die_with_parent, os.getpid()),
        )  # fmt: skip
    finished = False
    try:
        out, _ = await asyncio.wait_for(proc.communicate(msgspec.json.encode(request)), timeout)
        finished = True
    except TimeoutError:
        raise ToolError(
            f"{shown} took more than {timeout:g} s to parse and was given up. Ask for "
            'fewer pages (e.g. pages: "1-3").'
        ) from None
    finally:
        if not finished:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    try:
        return msgspec.json.decode(out, type=_Answer)
    except msgspec.DecodeError:
        why = "ran out of memory" if proc.returncode and proc.returncode < 0 else "failed"
        raise ToolError(f"{shown}: parsing it {why} (exit {proc.returncode}).") from None


def _die_with_parent(parent_pid: int) -> None:
    die_with_parent(parent_pid)


def _result(
    path: Path, shown: str, answer: _Answer, last: int | None, *, rendered: bool
) -> ToolResult:
    blocks: list[UserContent] = []
    parts: list[str] = []
    scans: list[int] = []
    for item in answer.items:
        if item.scan:
            scans.append(item.page)
            note = "no text layer: sent as an image"
            if item.image is None:
                note = "image only, no text layer: " + (
                    f"not rendered (at most {PDF_MAX_IMAGES} pages per read, each within the "
                    "image size limit)"
                    if rendered
                    else "the current model cannot view images"
                )
            parts.append(f"--- page {item.page} of {answer.pages} ({note}) ---")
            if item.image:
                blocks.append(ImageContent(data=item.image, mime_type="image/png"))
            continue
        parts.append(f"--- page {item.page} of {answer.pages} ---\n{item.text.rstrip()}")
    first = answer.items[0].page if answer.items else 0
    end = answer.items[-1].page if answer.items else 0
    wanted = min(last or answer.pages, answer.pages)
    details = ReadPdfDetails(
        path=str(path), pages=answer.pages, first=first, last=end, image_pages=scans
    )
    details.images = len(blocks)
    head = f"PDF {shown}: {answer.pages} pages; pages {first}-{end} below."
    if end < wanted:
        why = {"bytes": "the output limit", "time": "the time limit"}.get(answer.cut or "", "")
        reason = why or f"{PDF_MAX_PAGES} pages per read"
        parts.append(f'[Stopped at page {end} ({reason}). Use pages: "{end + 1}-" to go on.]')
        details.truncated, details.next_page = True, end + 1
    text = "\n\n".join([head, *parts])
    if not blocks:
        return ToolResult(text, details)
    return ToolResult([TextContent(text=text), *blocks], details)
