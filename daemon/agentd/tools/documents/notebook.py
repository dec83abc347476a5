"""A Jupyter notebook as the model reads it: cells in order, then their outputs.

The notebook is decoded with msgspec (fast for large files; nbformat is needed only to
validate an edit, :mod:`.cells`). Each cell is shown with its 1-based index, id, type and
execution count, then its source, then its outputs: stream text, ``text/plain`` or
``text/markdown`` results, errors with their traceback cleaned of ANSI escapes, and images
as image content (at most :data:`MAX_IMAGES` per call, each within the image byte limit;
a note says where one was left out). Paging is by cell (``offset``/``limit``), and a result
stops at the byte limit with the offset to continue from.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import msgspec

from agentd.protocol.content import ImageContent, TextContent, UserContent
from agentd.protocol.document_details import ReadNotebookDetails
from agentd.tools.base import ToolError, ToolResult

MAX_IMAGES = 8
"""Images one read returns at most (the others are named, not sent)."""
MAX_OUTPUT_CHARS = 4000
"""Characters of one output shown (its end is cut with a note)."""
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")


class Notebook(msgspec.Struct):
    """The parts of an ``.ipynb`` the tools read; everything else stays in the file."""

    cells: list[dict[str, Any]]
    metadata: dict[str, Any] = {}
    nbformat: int = 4
    nbformat_minor: int = 0


def parse(data: bytes, shown: str) -> Notebook:
    """The notebook in ``data``; ToolError naming the problem when it is not one."""
    try:
        notebook = msgspec.json.decode(data, type=Notebook)
    except msgspec.ValidationError as error:
        raise ToolError(f"{shown} is not a valid Jupyter notebook: {error}.") from None
    except msgspec.DecodeError as error:
        raise ToolError(
            f"{shown} is not a valid Jupyter notebook (its JSON is malformed: {error}). "
            "Read it as text with bash (e.g. `head -c 2000 PATH`) to see what is wrong."
        ) from None
    if notebook.nbformat != 4:
        raise ToolError(
            f"{shown} is an nbformat {notebook.nbformat} notebook; only version 4 is supported."
        )
    return notebook


def joined(value: object) -> str:
    """A notebook multi-line string (a list of lines or one string) as one string."""
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else ""


def clean(text: str) -> str:
    """``text`` without terminal escape sequences (tracebacks are coloured)."""
    return _ANSI.sub("", text)


class _Budget:
    """What one read may still return: bytes of text and images."""

    def __init__(self, max_bytes: int, max_image_bytes: int, images: bool) -> None:
        self.bytes_left = max_bytes
        self.max_image_bytes = max_image_bytes
        self.images = images
        self.images_left = MAX_IMAGES if images else 0
        self.blocks: list[UserContent] = []
        self.pending: list[UserContent] = []
        self.texts: list[str] = []
        self.notes: list[str] = []


def render(
    notebook: Notebook,
    *,
    shown: str,
    offset: int,
    limit: int | None,
    max_bytes: int,
    max_image_bytes: int,
    accept_images: bool,
) -> ToolResult:
    """The read result for cells ``offset``… (1-based) of ``notebook``."""
    total = len(notebook.cells)
    if total and offset > total:
        raise ToolError(
            f"offset {offset} is past the last cell of {shown}, which has {total} cells. "
            f"Use an offset between 1 and {total}."
        )
    budget = _Budget(max_bytes, max_image_bytes, accept_images)
    last = min(total, offset - 1 + (limit or total))
    shown_until = offset - 1
    for index in range(offset, last + 1):
        text = _cell_text(index, notebook.cells[index - 1], budget)
        size = len(text.encode("utf-8"))
        if size > budget.bytes_left and shown_until >= offset:
            budget.images_left += len(budget.pending)
            break
        budget.bytes_left -= size
        budget.texts.append(text)
        budget.blocks.extend(budget.pending)
        budget.pending.clear()
        shown_until = index
    return _result(notebook, shown, offset, shown_until, budget)


def _result(notebook: Notebook, shown: str, offset: int, until: int, budget: _Budget) -> ToolResult:
    total = len(notebook.cells)
    language = notebook.metadata.get("kernelspec", {}).get("language") or notebook.metadata.get(
        "language_info", {}
    ).get("name")
    head = f"Notebook {shown}: {total} cells"
    head += f", {language}" if isinstance(language, str) else ""
    head += f" (nbformat {notebook.nbformat}.{notebook.nbformat_minor})."
    parts = [head, *budget.texts]
    details = ReadNotebookDetails(
        path="", cells=total, offset=offset, shown=max(0, until - offset + 1)
    )
    if until < total:
        parts.append(
            f"[Showing cells {offset}-{until} of {total}. Use offset={until + 1} to continue.]"
        )
        details.truncated, details.next_offset = True, until + 1
    parts.extend(budget.notes)
    images = [block for block in budget.blocks if isinstance(block, ImageContent)]
    details.images = len(images)
    text = "\n\n".join(parts)
    if not budget.blocks:
        return ToolResult(text, details)
    return ToolResult([TextContent(text=text), *budget.blocks], details)


def _cell_text(index: int, cell: dict[str, Any], budget: _Budget) -> str:
    kind = str(cell.get("cell_type", "?"))
    head = f"<cell {index}"
    if isinstance(cell.get("id"), str):
        head += f' id="{cell["id"]}"'
    head += f" type={kind}"
    if kind == "code":
        count = cell.get("execution_count")
        head += f" execution_count={count if isinstance(count, int) else 'none'}"
    lines = [head + ">", joined(cell.get("source")).rstrip("\n"), "</cell>"]
    outputs = cell.get("outputs") if kind == "code" else None
    for number, output in enumerate(outputs if isinstance(outputs, list) else [], 1):
        if isinstance(output, dict):
            lines.append(_output_text(index, number, output, budget))
    return "\n".join(lines)


def _output_text(cell: int, number: int, output: dict[str, Any], budget: _Budget) -> str:
    kind = output.get("output_type")
    label = f"[output {number} of cell {cell}"
    if kind == "stream":
        return (
            f"{label}: {output.get('name', 'stdout')}]\n{_cut(clean(joined(output.get('text'))))}"
        )
    if kind == "error":
        trace = clean("\n".join(joined(line) for line in output.get("traceback") or []))
        name = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return f"{label}: error {name}]\n{_cut(trace or name)}"
    if kind in ("execute_result", "display_data"):
        return _data_text(label, output.get("data"), budget)
    return f"{label}: {kind}]"


def _data_text(label: str, data: object, budget: _Budget) -> str:
    if not isinstance(data, dict):
        return f"{label}: no data]"
    image = next((mime for mime in _IMAGE_MIMES if mime in data), None)
    note = ""
    if image is not None:
        note = _take_image(image, joined(data[image]), budget)
    for mime in ("text/markdown", "text/plain"):
        if mime in data:
            text = _cut(clean(joined(data[mime])))
            return f"{label}: {mime}{note}]\n{text}"
    kinds = ", ".join(sorted(str(key) for key in data))
    return f"{label}: {kinds}{note}]"


def _take_image(mime: str, encoded: str, budget: _Budget) -> str:
    """Queue an output image for the model; the note the output's label gets."""
    if not budget.images:
        return f", {mime} image (the current model cannot view images)"
    try:
        raw = base64.b64decode(encoded.replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return f", {mime} image (not valid base64; left out)"
    if len(raw) > budget.max_image_bytes:
        return f", {mime} image of {len(raw)} bytes (over the image limit; left out)"
    if budget.images_left <= 0:
        return f", {mime} image (left out: {MAX_IMAGES} images per read)"
    budget.images_left -= 1
    data = base64.b64encode(raw).decode("ascii")
    budget.pending.append(ImageContent(data=data, mime_type=mime))
    return f", {mime} image {MAX_IMAGES - budget.images_left} attached"


def _cut(text: str) -> str:
    text = text.rstrip("\n")
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    rest = len(text) - MAX_OUTPUT_CHARS
    return f"{text[:MAX_OUTPUT_CHARS]}\n… [{rest} more characters of this output cut]"
