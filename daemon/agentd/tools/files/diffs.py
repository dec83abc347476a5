"""Unified diffs of file changes, fast on big files with small changes.

:func:`summarize_change` trims the common prefix and suffix of the two texts at C speed
(chunked slice comparison), so a one-line edit of a 10 MB file only diffs a few lines; the
remaining middle goes through :mod:`difflib`. The result carries the diff text, the first
changed line (1-based, in the new text) and added/removed line counts for a ``+3 -1`` summary.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

CONTEXT_LINES = 3
MAX_DIFF_CHARS = 200_000
MAX_DIFFED_LINES = 20_000
_CHUNK = 1 << 16


class DiffSummary(msgspec.Struct, frozen=True):
    """A change between two texts. ``diff`` is empty when they are equal."""

    diff: str
    first_changed_line: int | None
    added: int
    removed: int
    truncated: bool = False


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix: whole chunks first, then a binary search in the chunk
    that differs (slice comparisons run at C speed; no per-character Python loop)."""
    limit = min(len(a), len(b))
    start = 0
    while start < limit and a[start : start + _CHUNK] == b[start : start + _CHUNK]:
        start += _CHUNK
    low, high = start, min(start + _CHUNK, limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[start:middle] == b[start:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most ``limit`` (same strategy as the prefix)."""
    size = 0
    while size < limit:
        step = min(_CHUNK, limit - size)
        if a[len(a) - size - step : len(a) - size] != b[len(b) - size - step : len(b) - size]:
            break
        size += step
    low, high = size, min(size + _CHUNK, limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - size] == b[len(b) - middle : len(b) - size]:
            low = middle
        else:
            high = middle - 1
    return low


def _split(text: str) -> list[str]:
    """Lines with their line endings kept (split on LF only)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    return lines


def _context_before(text: str, start: int, count: int) -> int:
    """Offset of the line ``count`` lines above the line starting at ``start``."""
    for _ in range(count):
        if start == 0:
            break
        start = text.rfind("\n", 0, start - 1) + 1
    return start


def _context_after(text: str, end: int, count: int) -> int:
    """Offset just past ``count`` more lines after ``end`` (a line start)."""
    for _ in range(count):
        if end >= len(text):
            break
        newline = text.find("\n", end)
        end = len(text) if newline < 0 else newline + 1
    return end


def summarize_change(old: str, new: str, label: str, *, created: bool = False) -> DiffSummary:
    """Diff ``old`` → ``new`` for file ``label`` (``created``: old did not exist)."""
    if old == new:
        return DiffSummary("", None, 0, 0)
    prefix = _common_prefix(old, new)
    start = old.rfind("\n", 0, prefix) + 1
    suffix = _common_suffix(old, new, min(len(old), len(new)) - start)
    old_end = len(old) - suffix
    if old_end > start and old[old_end - 1] != "\n":
        newline = old.find("\n", old_end)
        old_end = len(old) if newline < 0 else newline + 1
    new_end = len(new) - (len(old) - old_end)
    window_start = _context_before(old, start, CONTEXT_LINES)
    old_window_end = _context_after(old, old_end, CONTEXT_LINES)
    new_window_end = new_end + (old_window_end - old_end)
    first_line = old.count("\n", 0, window_start) + 1
    a = _split(old[window_start:old_window_end])
    b = _split(new[window_start:new_window_end])
    header = f"--- {'/dev/null' if created else 'a/' + label}\n+++ b/{label}\n"
    return _format(a, b, first_line, header)


def _opcode_groups(a: list[str], b: list[str]) -> Iterator[list[tuple[str, int, int, int, int]]]:
    if len(a) > MAX_DIFFED_LINES or len(b) > MAX_DIFFED_LINES:
        yield [("replace", 0, len(a), 0, len(b))]
        return
    import difflib  # only for files that changed in the middle

    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    yield from matcher.get_grouped_opcodes(CONTEXT_LINES)


def _format(a: list[str], b: list[str], first_line: int, header: str) -> DiffSummary:
    out = [header]
    added = removed = 0
    first_changed: int | None = None
    for group in _opcode_groups(a, b):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(
            f"@@ -{_range(first_line + i1, i2 - i1)} +{_range(first_line + j1, j2 - j1)} @@\n"
        )
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out.extend(_mark(" ", a[a1:a2]))
                continue
            if first_changed is None:
                first_changed = first_line + b1
            out.extend(_mark("-", a[a1:a2]))
            out.extend(_mark("+", b[b1:b2]))
            removed += a2 - a1
            added += b2 - b1
    text = "".join(out)
    truncated = len(text) > MAX_DIFF_CHARS
    if truncated:
        text = text[:MAX_DIFF_CHARS] + "\n… [diff truncated]\n"
    return DiffSummary(text, first_changed, added, removed, truncated)


def _range(start: int, length: int) -> str:
    if length == 0:
        return f"{start - 1},0"
    return str(start) if length == 1 else f"{start},{length}"


def _mark(sign: str, lines: list[str]) -> Iterator[str]:
    for line in lines:
        if line.endswith("\n"):
            yield sign + line
        else:
            yield f"{sign}{line}\n\\ No newline at end of file\n"
