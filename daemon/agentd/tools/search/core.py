"""Content search shared by both grep backends: request and result types, the limit rule,
and the pure-Python backend.

Both backends return the same :class:`SearchResult` for the same tree: hits in walk order
(names sorted within each directory, depth first), paths relative to the search root (the
file name when the root is a file), cut by :func:`limit_hits`. The Python backend reads each
file whole, runs one compiled regex over the whole text, and computes line numbers only for
hits; every hit is re-checked against its own line, so matches never span lines (as in rg).
Files with a NUL byte are skipped as binary. It walks by directory descriptors
(:class:`agentd.tools.search.ignore.Walker`) and runs in a child process
(:mod:`agentd.tools.search.proc`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal, NamedTuple

import msgspec

from agentd.tools.base import ToolError
from agentd.tools.defaults import GREP_TIMEOUT
from agentd.tools.files.safeopen import open_beneath
from agentd.tools.search.ignore import Entry, Walker

Mode = Literal["content", "files", "count"]
"""Seconds the Python backend may spend in one file before it is stopped (``grep_timeout``)."""


class Hit(NamedTuple):
    """One output line of content mode: a match or a context line."""

    path: str
    line: int
    text: str
    is_match: bool


class SearchRequest(msgspec.Struct, frozen=True):
    """What to search for and where (``root`` is a directory or a file; ``workspace`` the
    sandbox root the walk stays beneath, None when unsandboxed; ``time_limit`` how long,
    in seconds, the Python backend may work on one file)."""

    pattern: str
    root: Path
    glob: str | None = None
    ignore_case: bool = False
    context: int = 0
    mode: Mode = "content"
    max_results: int = 100
    workspace: Path | None = None
    time_limit: float = GREP_TIMEOUT


class SearchResult(msgspec.Struct):
    """Hits (content mode) or per-file counts (files/count mode); ``cut`` when more exist."""

    hits: list[Hit] = msgspec.field(default_factory=list)
    files: list[tuple[str, int]] = msgspec.field(default_factory=list)
    cut: bool = False


def limit_hits(hits: list[Hit], max_results: int, context: int) -> tuple[list[Hit], bool]:
    """Keep hits up to the ``max_results``-th match plus that match's trailing context.

    ``hits`` must be in output order. Returns the kept hits and whether matches were cut.
    """
    matches = 0
    last_index = -1
    for index, hit in enumerate(hits):
        if not hit.is_match:
            continue
        matches += 1
        if matches == max_results:
            last_index = index
        elif matches > max_results:
            last = hits[last_index]
            trailing = [
                h
                for h in hits[last_index + 1 : index]
                if h.path == last.path and h.line <= last.line + context
            ]
            return hits[: last_index + 1] + trailing, True
    return hits, False


def compile_pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """The Python regex for ``pattern``; ToolError with the parser's message if invalid."""
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        return re.compile(pattern, flags)
    except re.error as error:
        raise ToolError(f"Invalid regex {pattern!r}: {error}.") from None


class FileResult(NamedTuple):
    """What one file contributed: its hits (content mode) and its number of matching lines."""

    rel: str
    hits: list[Hit]
    matches: int


def units(result: FileResult, mode: Mode) -> int:
    """How much a file counts toward ``max_results``: matches, or 1 per matching file."""
    return result.matches if mode == "content" else int(result.matches > 0)


def search_files(files: Iterable[Entry], request: SearchRequest, wanted: int) -> list[FileResult]:
    """Search walked files in order until ``wanted`` results are found (blocking; each
    file is opened relative to the directory it was listed in, see :class:`Entry`)."""
    regex = compile_pattern(request.pattern, request.ignore_case)
    results: list[FileResult] = []
    found = 0
    for entry in files:
        text = _read_text(entry)
        if text is None:
            continue
        rel = entry.rel
        if request.mode == "content":
            hits, count = _content_hits(rel, text, regex, request.context, wanted - found)
        else:
            limit = 1 if request.mode == "files" else None
            hits, count = [], len(_match_lines(text, regex, limit))
        if count:
            result = FileResult(rel, hits, count)
            results.append(result)
            found += units(result, request.mode)
            if found >= wanted:
                break
    return results


def finish(results: list[FileResult], request: SearchRequest) -> SearchResult:
    """Per-file results in walk order, cut to ``request.max_results``."""
    if request.mode == "content":
        hits = [hit for result in results for hit in result.hits]
        kept, cut = limit_hits(hits, request.max_results, request.context)
        return SearchResult(hits=kept, cut=cut)
    files = [(result.rel, result.matches) for result in results]
    return SearchResult(files=files[: request.max_results], cut=len(files) > request.max_results)


def walk_files(request: SearchRequest) -> Iterator[Entry]:
    """Every file to search, in walk order, beneath ``request.workspace`` when set.

    Raises ToolError when the root leads outside the workspace."""
    root = request.root
    if not root.is_dir():
        parent = open_beneath(root.parent, request.workspace, os.O_PATH | os.O_DIRECTORY)
        try:
            yield Entry(str(root), root.name, False, parent, root.name)
        finally:
            os.close(parent)
        return
    globs = [request.glob] if request.glob else []
    yield from Walker(root, globs, request.workspace).walk()


def _read_text(entry: Entry) -> str | None:
    fd = entry.open()
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as file:
            data = file.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def _match_lines(
    text: str, regex: re.Pattern[str], limit: int | None
) -> list[tuple[int, int, int]]:
    """(line number, start, end) of each line with a match, at most ``limit``."""
    found: list[tuple[int, int, int]] = []
    pos = counted = 0
    line_no = 1
    size = len(text)
    while limit is None or len(found) < limit:
        match = regex.search(text, pos)
        if match is None:
            break
        start = text.rfind("\n", 0, match.start()) + 1
        if start == size and (size == 0 or text[-1] == "\n"):
            break
        end = text.find("\n", start)
        end = size if end < 0 else end
        line_no += text.count("\n", counted, start)
        counted = start
        if regex.search(text[start:end]):
            found.append((line_no, start, end))
        pos = end + 1
        if pos > size:
            break
    return found


def _content_hits(
    rel: str, text: str, regex: re.Pattern[str], context: int, limit: int
) -> tuple[list[Hit], int]:
    matches = _match_lines(text, regex, limit)
    if not context:
        return [Hit(rel, n, text[s:e], True) for n, s, e in matches], len(matches)
    lines: dict[int, Hit] = {}
    for number, start, end in matches:
        for offset, line_text in _around(text, start, end, context):
            lines.setdefault(number + offset, Hit(rel, number + offset, line_text, False))
        lines[number] = Hit(rel, number, text[start:end], True)
    return [lines[n] for n in sorted(lines)], len(matches)


def _around(text: str, start: int, end: int, context: int) -> list[tuple[int, str]]:
    """Up to ``context`` lines before and after the line ``text[start:end]``."""
    out: list[tuple[int, str]] = []
    cursor = start
    for offset in range(1, context + 1):
        if cursor == 0:
            break
        previous = text.rfind("\n", 0, cursor - 1) + 1
        out.append((-offset, text[previous : cursor - 1]))
        cursor = previous
    cursor = end
    for offset in range(1, context + 1):
        if cursor + 1 >= len(text):
            break
        following = text.find("\n", cursor + 1)
        following = len(text) if following < 0 else following
        out.append((offset, text[cursor + 1 : following]))
        cursor = following
    return out
