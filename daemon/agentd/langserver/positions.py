"""Positions as the model gives them (1-based line and column, columns in characters) and as
a server reads them (0-based line, the character offset in the negotiated position encoding:
UTF-16 code units by default, or UTF-8 bytes, or UTF-32 code points)."""

from __future__ import annotations

import re

from lsprotocol import types

from agentd.tools.base import ToolError

_WIDTHS = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}
_UNIT = {"utf-8": 1, "utf-16": 2, "utf-32": 4}


def lines_of(text: str) -> list[str]:
    """The lines of ``text`` without their endings (LSP counts ``\\n``, ``\\r\\n``, ``\\r``)."""
    return re.split(r"\r\n|\r|\n", text)


def to_units(line: str, column: int, encoding: str) -> int:
    """The offset of character index ``column`` (0-based) of ``line`` in ``encoding``."""
    prefix = line[:column]
    if encoding == "utf-32":
        return len(prefix)
    return len(prefix.encode(_WIDTHS.get(encoding, "utf-16-le"), "surrogatepass")) // _UNIT.get(
        encoding, 2
    )


def from_units(line: str, units: int, encoding: str) -> int:
    """The character index (0-based) at offset ``units`` of ``line`` in ``encoding``."""
    if encoding == "utf-32":
        return min(units, len(line))
    unit = _UNIT.get(encoding, 2)
    data = line.encode(_WIDTHS.get(encoding, "utf-16-le"), "surrogatepass")
    head = data[: units * unit]
    return len(head.decode(_WIDTHS.get(encoding, "utf-16-le"), "ignore"))


def position(
    lines: list[str], line: int, column: int | None, symbol: str | None, encoding: str
) -> types.Position:
    """The server position of 1-based ``line`` and ``column`` (or of the first ``symbol`` on
    that line); ToolError for a line or column out of range or a symbol not on the line."""
    if not 1 <= line <= len(lines):
        raise ToolError(f"line {line} is out of range: the file has {len(lines)} lines.")
    text = lines[line - 1]
    if symbol:
        index = _symbol_index(text, symbol)
        if index is None:
            raise ToolError(f"{symbol!r} is not on line {line}: {text.strip()[:200]!r}")
    elif column is not None:
        if not 1 <= column <= len(text) + 1:
            raise ToolError(
                f"column {column} is out of range: line {line} has {len(text)} characters."
            )
        index = column - 1
    else:
        index = len(text) - len(text.lstrip())
    return types.Position(line=line - 1, character=to_units(text, index, encoding))


def _symbol_index(text: str, symbol: str) -> int | None:
    """Where ``symbol`` first stands on its own (not inside a longer name), else anywhere."""
    word = re.search(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])", text)
    if word is not None:
        return word.start()
    found = text.find(symbol)
    return None if found < 0 else found


def human(lines: list[str], pos: types.Position, encoding: str) -> tuple[int, int]:
    """1-based (line, column in characters) of a server position in a file of ``lines``."""
    text = lines[pos.line] if 0 <= pos.line < len(lines) else ""
    return pos.line + 1, from_units(text, pos.character, encoding) + 1


def offset(text_lines: list[str], pos: types.Position, encoding: str) -> int:
    """The index into the joined text (``\\n`` endings) of a server position."""
    line = min(max(pos.line, 0), len(text_lines))
    before = sum(len(item) + 1 for item in text_lines[:line])
    current = text_lines[line] if line < len(text_lines) else ""
    return before + from_units(current, pos.character, encoding)
