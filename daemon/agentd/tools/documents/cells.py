"""One cell of a notebook replaced, inserted or deleted, the rest of the file kept byte for
byte.

The file's cells are found as raw JSON spans (msgspec ``Raw``, located in order in the
original bytes); an edit rewrites only the span of the cell it touches (or inserts one),
serialised the way Jupyter writes notebooks (one-space indent, sorted keys, the source as a
list of lines) at the indentation of its neighbours. The result must validate with
``nbformat`` or nothing is written. An edited code cell's outputs and execution count are
cleared; a new cell gets a fresh id when the notebook has ids (nbformat 4.5 and later).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import msgspec
import nbformat

from agentd.tools.base import ToolError
from agentd.tools.documents.notebook import joined, parse

CELL_TYPES = ("code", "markdown", "raw")


class _Spans(msgspec.Struct):
    cells: list[msgspec.Raw]


class Located(msgspec.Struct, frozen=True):
    """The cells of a notebook file with the byte span of each, and the cells array's
    brackets (``open_at``: the ``[``, ``close_at``: the ``]``)."""

    cells: list[dict[str, Any]]
    spans: list[tuple[int, int]]
    open_at: int
    close_at: int
    minor: int


def locate(data: bytes, shown: str) -> Located:
    """Parse ``data`` and find where each cell's JSON lies in it."""
    notebook = parse(data, shown)
    raw = msgspec.json.decode(data, type=_Spans).cells
    key = data.find(b'"cells"')
    open_at = data.find(b"[", key)
    spans: list[tuple[int, int]] = []
    at = open_at + 1
    for cell in raw:
        piece = bytes(cell)
        start = data.find(piece, at)
        if key < 0 or start < 0:
            raise ToolError(f"{shown}: the cells could not be located in the file.")
        spans.append((start, start + len(piece)))
        at = start + len(piece)
    close_at = data.find(b"]", at)
    return Located(notebook.cells, spans, open_at, close_at, notebook.nbformat_minor)


def find_cell(located: Located, shown: str, cell_id: str | None, index: int | None) -> int:
    """The 0-based position of the cell named by ``cell_id`` or 1-based ``index``."""
    if cell_id is not None:
        for position, cell in enumerate(located.cells):
            if cell.get("id") == cell_id:
                return position
        ids = [str(c.get("id")) for c in located.cells[:20] if isinstance(c.get("id"), str)]
        known = f" Cell ids: {', '.join(ids)}." if ids else " This notebook has no cell ids."
        raise ToolError(f"No cell with id {cell_id!r} in {shown}.{known} Or give `index`.")
    if index is None:
        raise ToolError("Give cell_id or index (1-based) of the cell.")
    if not 1 <= index <= len(located.cells):
        raise ToolError(f"index {index} is out of range: {shown} has {len(located.cells)} cells.")
    return index - 1


def new_cell(kind: str, source: str, minor: int, base: dict[str, Any] | None) -> dict[str, Any]:
    """A cell of ``kind`` holding ``source``; ``base`` (the cell replaced) gives its id and
    metadata. A code cell starts with no outputs and no execution count."""
    if kind not in CELL_TYPES:
        raise ToolError(f"cell_type must be one of {', '.join(CELL_TYPES)}, not {kind!r}.")
    cell: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": source_lines(source)}
    if base is not None:
        cell["metadata"] = base.get("metadata", {})
        if isinstance(base.get("id"), str):
            cell["id"] = base["id"]
        if kind == base.get("cell_type") and kind != "code" and "attachments" in base:
            cell["attachments"] = base["attachments"]
    if "id" not in cell and minor >= 5:
        cell["id"] = secrets.token_hex(4)
    if kind == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


def source_lines(source: str) -> list[str]:
    """``source`` as Jupyter stores it: lines with their newlines, the last without one."""
    return source.splitlines(keepends=True)


def _indent_of(data: bytes, start: int) -> bytes:
    line_start = data.rfind(b"\n", 0, start) + 1
    return data[line_start:start]


def _serialise(cell: dict[str, Any], indent: bytes) -> bytes:
    text = json.dumps(cell, indent=1, sort_keys=True, ensure_ascii=False)
    return text.encode("utf-8").replace(b"\n", b"\n" + indent)


def splice(data: bytes, located: Located, position: int, action: str, cell: Any) -> bytes:
    """``data`` with the cell at ``position`` replaced by ``cell``, ``cell`` inserted before
    ``position`` (``position == len(cells)``: appended), or the cell deleted."""
    spans = located.spans
    if action == "delete":
        start, end = spans[position]
        if position + 1 < len(spans):
            return data[:start] + data[spans[position + 1][0] :]
        if position > 0:
            return data[: spans[position - 1][1]] + data[end:]
        return data[: located.open_at + 1] + data[located.close_at :]
    if action == "replace":
        start, end = spans[position]
        return data[:start] + _serialise(cell, _indent_of(data, start)) + data[end:]
    if not spans:
        outer = _indent_of(data, data.rfind(b'"cells"', 0, located.open_at))
        inner = outer + b" "
        body = b"\n" + inner + _serialise(cell, inner) + b"\n" + outer
        return data[: located.open_at + 1] + body + data[located.close_at :]
    if position < len(spans):
        start = spans[position][0]
        indent = _indent_of(data, start)
        return data[:start] + _serialise(cell, indent) + b",\n" + indent + data[start:]
    end = spans[-1][1]
    indent = _indent_of(data, spans[-1][0])
    return data[:end] + b",\n" + indent + _serialise(cell, indent) + data[end:]


def validate(data: bytes, shown: str, *, original: bool = False) -> None:
    """ToolError unless ``data`` is a valid notebook by nbformat's schema (``original``: the
    file as found, else the result of an edit)."""
    try:
        nbformat.validate(json.loads(data))
    except (ValueError, nbformat.ValidationError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        if original:
            raise ToolError(
                f"{shown} is not a valid notebook ({message}); it is not edited. "
                "Fix it with edit or write first."
            ) from None
        raise ToolError(f"{shown} would not be a valid notebook: {message}") from None


def source_of(cell: dict[str, Any] | None) -> str:
    """A cell's source as one string ('' for no cell)."""
    return "" if cell is None else joined(cell.get("source"))
