"""Output limits shared by every tool, and the helpers that apply them.

Every tool result is bounded by :class:`Limits` (default 2,000 lines or 50 KB, whichever is hit
first). ``ctx.settings`` may override them with ``max_output_lines``, ``max_output_bytes`` and
``max_line_chars``. A truncated result always says so (:func:`notice`), and each tool adds how
to get the rest (``read``: an ``offset``; ``bash``: the spill file; ``grep``: a narrower search).

The built-in values live in :mod:`agentd.tools.defaults`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

import msgspec

from agentd.tools.defaults import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINE_CHARS,
    DEFAULT_MAX_LINES,
    ToolSettings,
)

GREP_MAX_RESULTS = 100
GREP_MAX_LINE_CHARS = 500


class Limits(msgspec.Struct, frozen=True):
    """Bounds for one result: lines, UTF-8 bytes, and characters per line."""

    max_lines: int = DEFAULT_MAX_LINES
    max_bytes: int = DEFAULT_MAX_BYTES
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS

    @classmethod
    def from_settings(cls, settings: ToolSettings) -> Limits:
        """The result limits of a session's tool settings."""
        return cls(settings.max_output_lines, settings.max_output_bytes, settings.max_line_chars)


class Truncation(msgspec.Struct, frozen=True):
    """The kept part of a text and what was dropped.

    ``limit`` names the bound that fired (``"lines"`` or ``"bytes"``), ``None`` when the text
    fit. Line counts treat a final newline as the end of the last line, not a new empty line.
    """

    text: str
    truncated: bool
    limit: Literal["lines", "bytes"] | None
    total_lines: int
    kept_lines: int
    total_bytes: int
    kept_bytes: int


def count_lines(text: str) -> int:
    """Number of lines in ``text`` (a trailing newline does not start another line)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def truncate_head(text: str, limits: Limits) -> Truncation:
    """Keep the beginning of ``text``: whole lines, within both limits.

    A first line longer than ``max_bytes`` on its own is cut at the byte limit so the result
    is never empty when the text is not.
    """
    lines = _split_lines(text)
    kept, limit = _keep(lines, limits, _cut_bytes_head)
    return _result(text, lines, kept, limit)


def truncate_tail(text: str, limits: Limits) -> Truncation:
    """Keep the end of ``text``: whole lines, within both limits (the mirror of head)."""
    lines = _split_lines(text)
    kept, limit = _keep(reversed(lines), limits, _cut_bytes_tail)
    kept.reverse()
    return _result(text, lines, kept, limit)


def _keep(
    lines: Iterable[str], limits: Limits, cut: Callable[[str, int], str]
) -> tuple[list[str], Literal["lines", "bytes"] | None]:
    """Whole lines in the given order while both limits hold, and which limit stopped it; a
    first line alone over the byte limit is ``cut`` to fit, so the result is never empty."""
    kept: list[str] = []
    size = 0
    for line in lines:
        if len(kept) == limits.max_lines:
            return kept, "lines"
        line_bytes = len(line.encode("utf-8", "surrogateescape")) + 1
        if size + line_bytes > limits.max_bytes:
            if not kept:
                kept.append(cut(line, limits.max_bytes))
            return kept, "bytes"
        kept.append(line)
        size += line_bytes
    return kept, None


def _result(
    text: str, lines: list[str], kept: list[str], limit: Literal["lines", "bytes"] | None
) -> Truncation:
    if limit is None:
        size = len(text.encode("utf-8", "surrogateescape"))
        return Truncation(text, False, None, len(lines), len(lines), size, size)
    kept_text = "\n".join(kept)
    return Truncation(
        text=kept_text,
        truncated=True,
        limit=limit,
        total_lines=len(lines),
        kept_lines=len(kept),
        total_bytes=len(text.encode("utf-8", "surrogateescape")),
        kept_bytes=len(kept_text.encode("utf-8", "surrogateescape")),
    )


def _cut_bytes_head(line: str, max_bytes: int) -> str:
    return line.encode("utf-8", "surrogateescape")[:max_bytes].decode("utf-8", "ignore")


def _cut_bytes_tail(line: str, max_bytes: int) -> str:
    return line.encode("utf-8", "surrogateescape")[-max_bytes:].decode("utf-8", "ignore")


def cut_line(line: str, max_chars: int) -> str:
    """``line`` unchanged when short enough, else its first ``max_chars`` plus a marker."""
    if len(line) <= max_chars:
        return line
    return f"{line[:max_chars]}… [line cut: {len(line) - max_chars} more chars]"


def notice(result: Truncation, *, kept: Literal["first", "last"], limits: Limits) -> str:
    """One sentence saying what was cut, e.g. ``Output truncated: showing the last 2000 of
    9000 lines (2,000-line limit).`` Tools append their own hint on getting the rest."""
    if result.limit == "lines":
        why = f"{limits.max_lines}-line limit"
    else:
        why = f"{limits.max_bytes // 1024} KB limit"
    return (
        f"Output truncated: showing the {kept} {result.kept_lines} of {result.total_lines} "
        f"lines ({why})."
    )
