"""A file's new text as an LSP ``WorkspaceEdit``: the smallest single text edit that turns
the editor's text into the new one, versioned when the editor has the file open, or the
file's creation (``CreateFile`` then the text) when it does not exist.

Plain values (the JSON shapes of LSP), so this module needs neither pygls nor lsprotocol.
"""

from __future__ import annotations

from typing import Any

Encoding = str
"""The negotiated position encoding: ``utf-16`` (LSP's default), ``utf-8`` or ``utf-32``."""


def _column(line_text: str, encoding: Encoding) -> int:
    """The length of ``line_text`` in the code units of ``encoding``."""
    if encoding == "utf-8":
        return len(line_text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(line_text)
    return len(line_text.encode("utf-16-le", "surrogatepass")) // 2


def position_at(text: str, offset: int, encoding: Encoding = "utf-16") -> dict[str, int]:
    """The LSP position of character ``offset`` of ``text``."""
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    return {"line": line, "character": _column(text[line_start:offset], encoding)}


def offset_at(text: str, line: int, character: int, encoding: Encoding = "utf-16") -> int:
    """The character offset of an LSP position in ``text`` (clamped to the line's end and to
    the text's end)."""
    start = 0
    for _ in range(line):
        found = text.find("\n", start)
        if found < 0:
            return len(text)
        start = found + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    offset, units = start, 0
    while offset < end and units < character:
        units += _column(text[offset], encoding)
        offset += 1
    return offset


def text_edit(old: str, new: str, encoding: Encoding = "utf-16") -> dict[str, Any] | None:
    """The smallest one-range ``TextEdit`` from ``old`` to ``new`` (common prefix and
    suffix kept), or None when they are equal."""
    if old == new:
        return None
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start = position_at(old, prefix, encoding)
    end = position_at(old, len(old) - suffix, encoding)
    return {"range": {"start": start, "end": end}, "newText": new[prefix : len(new) - suffix]}


def replace_edit(
    uri: str,
    old: str,
    new: str,
    *,
    version: int | None,
    document_changes: bool,
    encoding: Encoding = "utf-16",
) -> dict[str, Any] | None:
    """A ``WorkspaceEdit`` replacing ``old`` (the editor's text of ``uri``, at ``version``
    when open) by ``new``: ``documentChanges`` with a versioned ``TextDocumentEdit`` when the
    client supports them, else ``changes``. None when nothing changes."""
    edit = text_edit(old, new, encoding)
    if edit is None:
        return None
    if not document_changes:
        return {"changes": {uri: [edit]}}
    document = {"uri": uri, "version": version}
    return {"documentChanges": [{"textDocument": document, "edits": [edit]}]}


def create_edit(uri: str, text: str) -> dict[str, Any]:
    """A ``WorkspaceEdit`` creating ``uri`` (never overwriting) holding ``text``."""
    create = {"kind": "create", "uri": uri, "options": {"ignoreIfExists": True}}
    changes: list[dict[str, Any]] = [create]
    if text:
        insert = {"range": _empty_range(), "newText": text}
        changes.append({"textDocument": {"uri": uri, "version": None}, "edits": [insert]})
    return {"documentChanges": changes}


def _empty_range() -> dict[str, dict[str, int]]:
    zero = {"line": 0, "character": 0}
    return {"start": zero, "end": dict(zero)}
