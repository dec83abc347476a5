"""lsprotocol answers as what the model reads and what clients get (:class:`LspItem`,
:class:`LspDiagnostic`): ``path:line:col`` plus the source line, grouped by file, capped
(the rest counted: "… N more"). Source lines of other files are read once per answer
(:class:`SourceLines`), from the documents the server has open, else the disk."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from agentd.langserver.positions import human, lines_of
from agentd.protocol.lsp_details import LspDiagnostic, LspItem, Severity

MAX_ITEMS = 200
"""Places listed in one answer at most."""
MAX_FILE_BYTES = 4 * 1024 * 1024
SEVERITIES: dict[int, Severity] = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def uri_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


class SourceLines:
    """The lines of files an answer names, each read once (``opened``: the texts the server
    has, by URI)."""

    def __init__(self, opened: Callable[[str], str | None]) -> None:
        self.opened = opened
        self.cache: dict[str, list[str]] = {}

    def of(self, uri: str) -> list[str]:
        if uri not in self.cache:
            text = self.opened(uri)
            if text is None:
                path = uri_path(uri)
                text = _read(path) if path is not None else ""
            self.cache[uri] = lines_of(text)
        return self.cache[uri]


def _read(path: Path) -> str:
    try:
        with path.open("rb") as file:
            return file.read(MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def location_items(
    found: Any, sources: SourceLines, encoding: str, shown: Callable[[Path], str]
) -> list[LspItem]:
    """Locations (``Location``, ``LocationLink``, a list of them, or None) as items."""
    if found is None:
        return []
    entries = found if isinstance(found, Sequence) else [found]
    items = []
    for entry in entries:
        uri = getattr(entry, "target_uri", None) or entry.uri
        start = (
            entry.target_selection_range if hasattr(entry, "target_uri") else entry.range
        ).start
        items.append(_item(uri, start, sources, encoding, shown))
    return items


def _item(
    uri: str,
    start: types.Position,
    sources: SourceLines,
    encoding: str,
    shown: Callable[[Path], str],
    name: str | None = None,
    kind: str | None = None,
) -> LspItem:
    lines = sources.of(uri)
    line, column = human(lines, start, encoding)
    text = lines[start.line].strip()[:300] if 0 <= start.line < len(lines) else None
    path = uri_path(uri)
    return LspItem(
        path=shown(path) if path else uri, line=line, column=column, name=name, kind=kind, text=text
    )


def symbol_items(
    found: Any, uri: str, sources: SourceLines, encoding: str, shown: Callable[[Path], str]
) -> list[LspItem]:
    """Document symbols (hierarchical or flat) and workspace symbols as items, nested
    children after their parent (``Parent.child`` names)."""
    items: list[LspItem] = []

    def walk(symbols: Iterable[Any], prefix: str) -> None:
        for symbol in symbols:
            kind = types.SymbolKind(symbol.kind).name.lower() if symbol.kind else None
            name = f"{prefix}{symbol.name}"
            if isinstance(symbol, types.DocumentSymbol):
                items.append(
                    _item(uri, symbol.selection_range.start, sources, encoding, shown, name, kind)
                )
                walk(symbol.children or (), f"{name}.")
            else:
                location = symbol.location
                start = getattr(location, "range", None)
                point = start.start if start is not None else types.Position(line=0, character=0)
                container = getattr(symbol, "container_name", None)
                label = f"{container}.{name}" if container else name
                items.append(_item(location.uri, point, sources, encoding, shown, label, kind))

    walk(found or (), "")
    return items


def call_items(
    calls: Any, incoming: bool, sources: SourceLines, encoding: str, shown: Callable[[Path], str]
) -> list[LspItem]:
    items = []
    for call in calls or ():
        item = call.from_ if incoming else call.to
        kind = types.SymbolKind(item.kind).name.lower()
        items.append(
            _item(item.uri, item.selection_range.start, sources, encoding, shown, item.name, kind)
        )
    return items


def diagnostic_items(
    found: Iterable[types.Diagnostic], lines: list[str], encoding: str, path: str, server: str
) -> list[LspDiagnostic]:
    out = []
    for item in found:
        line, column = human(lines, item.range.start, encoding)
        end_line, end_column = human(lines, item.range.end, encoding)
        code = None if item.code is None else str(item.code)
        out.append(
            LspDiagnostic(
                path=path,
                line=line,
                column=column,
                end_line=end_line,
                end_column=end_column,
                severity=SEVERITIES.get(int(item.severity or 1), "error"),
                message=item.message,
                code=code,
                source=item.source,
                server=server,
            )
        )
    return out


def items_text(items: list[LspItem], heading: str) -> str:
    """``heading``, then the items grouped by file (``  line:col: text``), capped."""
    if not items:
        return f"{heading}: none found."
    lines = [f"{heading} ({len(items)}):"]
    current = None
    for item in items[:MAX_ITEMS]:
        if item.path != current:
            current = item.path
            lines.append(f"{item.path}:")
        label = f" {item.kind} {item.name}" if item.name else ""
        text = f": {item.text}" if item.text else ""
        lines.append(f"  {item.line}:{item.column}{label}{text}")
    if len(items) > MAX_ITEMS:
        lines.append(f"… {len(items) - MAX_ITEMS} more")
    return "\n".join(lines)


def hover_text(found: types.Hover | None) -> str | None:
    if found is None:
        return None
    contents = found.contents
    if isinstance(contents, types.MarkupContent):
        return contents.value
    parts = contents if isinstance(contents, list) else [contents]
    return "\n".join(p if isinstance(p, str) else str(getattr(p, "value", p)) for p in parts)
