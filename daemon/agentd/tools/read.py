"""The ``read`` tool: numbered lines of a text file, or an image as image content.

The file is streamed: reaching a late ``offset`` counts newlines in 1 MB chunks and never
holds more than one chunk plus the shown window in memory, and a very long line is read only
up to the cut. Reading records the file's stamp for edit's stale-file check. With an editor
attached (``ctx.files``) the text comes from the editor, unsaved changes included.
"""

from __future__ import annotations

import asyncio
import base64
import io
import os
from pathlib import Path
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.content import ImageContent, TextContent, UserContent
from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import ReadDetails, ReadImageDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.files.fileio import looks_binary, record_stamp
from agentd.tools.files.paths import display_path, locate, resolve_path
from agentd.tools.files.safeopen import open_read, read_bytes
from agentd.tools.files.truncate import Limits

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
IMAGE_TYPES |= {".gif": "image/gif", ".webp": "image/webp"}
DOCUMENT_SUFFIXES = (".ipynb", ".pdf")
_CHUNK = 1 << 20


class ReadParams(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[
        str, msgspec.Meta(description="File to read (relative to the cwd, or absolute).")
    ]
    offset: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        msgspec.Meta(description="1-based line number to start at (default 1)."),
    ] = None
    limit: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        msgspec.Meta(description="Maximum number of lines to return (default: all that fit)."),
    ] = None
    pages: Annotated[
        str | None,
        msgspec.Meta(description='PDF only: the pages to read, e.g. "3" or "3-5" (1-based).'),
    ] = None


class _Window(msgspec.Struct):
    lines: list[str]
    first: int
    total: int | None
    cut_lines: int
    stopped_by: str | None


class ReadTool:
    name: ClassVar[str] = "read"
    description: ClassVar[str] = (
        "Read a file. Text comes back as numbered lines (`cat -n` style, 1-based). At most "
        "{max_lines} lines or {max_kb} KB per call; lines over {max_line_chars} characters are "
        "cut. When a result is "
        "truncated it tells you the offset to continue from: call read again with that "
        "`offset` (and optionally `limit`). Images (png, jpg, gif, webp) are returned as "
        "images. Jupyter notebooks (.ipynb) come back as their cells with outputs; there "
        "`offset`/`limit` count cells, and notebook_edit changes one cell. PDFs come back "
        "as text per page (at most {pdf_max_pages} pages per call; choose them with `pages`, "
        'e.g. "3-5"); a scanned page comes as an image. Other binary files are refused: '
        "inspect them with bash (e.g. `file`, `xxd`)."
    )
    Params: ClassVar[type[ReadParams]] = ReadParams
    kind: ClassVar[ToolKind] = "read"
    mutating: ClassVar[bool] = False

    def locations(self, params: ReadParams, ctx: ToolContext) -> list[Location]:
        return locate(params.path, ctx, line=params.offset or 1)

    async def run(self, params: ReadParams, ctx: ToolContext) -> ToolResult:
        path = resolve_path(params.path, ctx)
        shown = display_path(path, ctx)
        _check_readable(path, shown)
        if path.suffix.lower() in DOCUMENT_SUFFIXES:
            from agentd.tools.documents import reader  # notebooks and PDFs: on first use

            result = await reader.read_document(
                path, shown, (params.offset, params.limit, params.pages), ctx
            )
            record_stamp(ctx, path)
            return result
        if params.pages is not None:
            raise ToolError("`pages` is for PDFs; use offset and limit for other files.")
        mime = IMAGE_TYPES.get(path.suffix.lower())
        if mime is not None:
            image = await asyncio.to_thread(_read_image, path, shown, mime, ctx)
            if image is not None:
                record_stamp(ctx, path)
                return image
        limits = Limits.from_settings(ctx.settings)
        text = await ctx.files.read_text(path) if ctx.files is not None else None
        if text is None:
            window = await asyncio.to_thread(
                _read_window, path, shown, params, limits, ctx.workspace
            )
        else:  # the editor's buffer, unsaved changes included
            data = io.BytesIO(text.encode("utf-8", "surrogateescape"))
            window = _window_of(io.BufferedReader(data), shown, params, limits)
        record_stamp(ctx, path)
        if ctx.ports.language_servers is not None:  # later answers see what the agent read
            await ctx.ports.language_servers.opened(path, ctx)
        return _text_result(path, shown, window, limits)


def _check_readable(path: Path, shown: str) -> None:
    if path.is_dir():
        raise ToolError(f"{shown} is a directory. Use the ls tool to list it.")
    if not path.exists():
        hint = ""
        if path.parent.is_dir():
            import difflib  # only for a missing file

            close = difflib.get_close_matches(
                path.name, [entry.name for entry in path.parent.iterdir()], n=3
            )
            if close:
                hint = f" Similar names in that directory: {', '.join(close)}."
        raise ToolError(f"{shown} does not exist.{hint}")
    if not path.is_file():
        raise ToolError(f"{shown} is not a regular file (a device, socket or pipe).")


def _read_image(path: Path, shown: str, mime: str, ctx: ToolContext) -> ToolResult | None:
    """Image content, or None when the bytes are not really an image of a known type."""
    with open_read(path, ctx.workspace) as file:
        head = file.read(16)
    if not _image_magic_ok(head, mime):
        return None
    size = path.stat().st_size
    limit = ctx.settings.max_image_bytes
    if size > limit:
        raise ToolError(
            f"{shown} is a {size}-byte image, over the {limit}-byte limit for images. "
            "Inspect it with bash instead (e.g. `file`, or resize it with an image tool)."
        )
    info = f"Image {shown} ({mime}, {size} bytes)."
    if not ctx.settings.accept_images:
        details = ReadImageDetails(path=str(path), mime_type=mime, bytes=size, shown=False)
        return ToolResult(f"{info} The current model cannot view images.", details)
    data = base64.b64encode(read_bytes(path, ctx.workspace)).decode("ascii")
    content: list[UserContent] = [TextContent(text=info), ImageContent(data=data, mime_type=mime)]
    return ToolResult(content, ReadImageDetails(path=str(path), mime_type=mime, bytes=size))


def _image_magic_ok(head: bytes, mime: str) -> bool:
    if mime == "image/png":
        return head.startswith(b"\x89PNG\r\n\x1a\n")
    if mime == "image/jpeg":
        return head.startswith(b"\xff\xd8\xff")
    if mime == "image/gif":
        return head.startswith((b"GIF87a", b"GIF89a"))
    return head.startswith(b"RIFF") and head[8:12] == b"WEBP"


def _read_window(
    path: Path, shown: str, params: ReadParams, limits: Limits, workspace: Path | None
) -> _Window:
    with open_read(path, workspace) as file:
        return _window_of(file, shown, params, limits)  # type: ignore[arg-type]


def _window_of(file: io.BufferedReader, shown: str, params: ReadParams, limits: Limits) -> _Window:
    """The lines ``params`` asks for, from an open binary file (or an editor's text)."""
    offset = params.offset or 1
    max_lines = min(params.limit or limits.max_lines, limits.max_lines)
    if looks_binary(file.read(8192)):
        raise ToolError(
            f"{shown} looks binary (it contains NUL bytes). Inspect it with bash instead, "
            "e.g. `file PATH`, `xxd PATH | head`, or `strings PATH | head`."
        )
    file.seek(0)
    skipped = _skip_lines(file, offset - 1)
    if skipped < offset - 1 or (offset > 1 and not file.peek(1)):
        if offset == 1:
            return _Window([], 1, 0, 0, None)
        raise ToolError(
            f"offset {offset} is past the end of {shown}, which has {skipped} lines. "
            f"Use an offset between 1 and {max(skipped, 1)}."
        )
    return _collect(file, offset, max_lines, limits)


def _skip_lines(file: io.BufferedReader, count: int) -> int:
    """Advance past ``count`` lines; returns how many were skipped (fewer at EOF).

    At EOF a final line without newline counts as a line.
    """
    skipped = 0
    while skipped < count:
        chunk = file.read(_CHUNK)
        if not chunk:
            return skipped
        newlines = chunk.count(b"\n")
        if newlines < count - skipped:
            skipped += newlines
            if len(chunk) < _CHUNK and not chunk.endswith(b"\n"):
                return skipped + 1
            continue
        rest = chunk.split(b"\n", count - skipped)[-1]
        file.seek(-len(rest), os.SEEK_CUR)
        return count
    return skipped


def _collect(file: io.BufferedReader, first: int, max_lines: int, limits: Limits) -> _Window:
    lines: list[str] = []
    size = cut = 0
    stopped_by: str | None = None
    cap = limits.max_line_chars * 4 + 1
    while True:
        raw = file.readline(cap)
        if not raw:
            return _Window(lines, first, first + len(lines) - 1, cut, stopped_by)
        if len(lines) == max_lines:
            stopped_by = "lines"
            break
        text, was_cut, ended = _decode_line(file, raw, cap, limits.max_line_chars)
        entry = f"{first + len(lines):>6}\t{text}"
        size += len(entry.encode("utf-8")) + 1
        if size > limits.max_bytes and lines:
            stopped_by = "bytes"
            raw = b"\n" if ended else b"-"
            break
        cut += was_cut
        lines.append(entry)
    total = first + len(lines) - 1 + _count_rest(raw, file)
    return _Window(lines, first, total, cut, stopped_by)


def _decode_line(
    file: io.BufferedReader, raw: bytes, cap: int, max_chars: int
) -> tuple[str, bool, bool]:
    """(text, was cut, ended by a newline); the rest of an over-long line is skipped."""
    ended = raw.endswith(b"\n")
    overlong = not ended and len(raw) == cap
    if overlong:
        while more := file.readline(_CHUNK):
            if more.endswith(b"\n"):
                ended = True
                break
    text = raw.decode("utf-8", "replace").rstrip("\n").rstrip("\r")
    if len(text) > max_chars or overlong:
        return f"{text[:max_chars]}… [line cut at {max_chars} chars]", True, ended
    return text, False, ended


def _count_rest(pending: bytes, file: io.BufferedReader) -> int:
    """Lines left: the already-read ``pending`` line plus everything after it."""
    count = 1 if pending.endswith(b"\n") else 0
    last = pending
    while chunk := file.read(_CHUNK):
        count += chunk.count(b"\n")
        last = chunk
    return count if last.endswith(b"\n") else count + 1


def _text_result(path: Path, shown: str, window: _Window, limits: Limits) -> ToolResult:
    details = ReadDetails(
        path=str(path), offset=window.first, lines=len(window.lines), total_lines=window.total
    )
    if not window.lines:
        return ToolResult(f"{shown} is empty.", details)
    last = window.first + len(window.lines) - 1
    parts = ["\n".join(window.lines)]
    if window.cut_lines:
        parts.append(
            f"[{window.cut_lines} line(s) longer than {limits.max_line_chars} chars were cut; "
            "use bash (e.g. `cut -c`) to see them whole.]"
        )
    if window.total is not None and last < window.total:
        why = {"lines": "", "bytes": f" ({limits.max_bytes // 1024} KB limit)"}
        reason = why.get(window.stopped_by or "", "")
        parts.append(
            f"[Showing lines {window.first}-{last} of {window.total}{reason}. "
            f"Use offset={last + 1} to continue.]"
        )
        details.truncated, details.next_offset = True, last + 1
    return ToolResult("\n".join(parts), details)
