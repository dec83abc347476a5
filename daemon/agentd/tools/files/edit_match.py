"""Exact-match replacement for the edit tool, with errors written for the model.

:func:`apply_edits` applies replacements in order, each to the result of the previous one,
and raises :class:`ToolError` on the first that cannot apply (nothing is written then): no
match (the message shows the closest lines, with line numbers), several matches without
``replace_all`` (count and line numbers), an empty ``old_string``, or no change.

CRLF files are matched and rewritten with LF internally and converted back, so the model's
LF-only strings match and the file stays CRLF.
"""

from __future__ import annotations

import msgspec

from agentd.tools.base import ToolError

MAX_LISTED_LINES = 20
MAX_CANDIDATES = 3
MAX_CANDIDATE_LINES = 6


class Replacement(msgspec.Struct, frozen=True):
    """One requested replacement."""

    old: str
    new: str
    replace_all: bool = False


def is_crlf(text: str) -> bool:
    """True when every line ending in ``text`` is CRLF (and there is at least one)."""
    if "\r" not in text:
        return False
    crlf = text.count("\r\n")
    return crlf > 0 and crlf == text.count("\n")


def apply_edits(text: str, edits: list[Replacement], shown: str) -> tuple[str, int]:
    """Apply ``edits`` to ``text``; return the new text and the number of replacements."""
    crlf = is_crlf(text)
    if crlf:
        text = text.replace("\r\n", "\n")
    total = 0
    for index, edit in enumerate(edits, start=1):
        label = f"Edit {index} of {len(edits)}: " if len(edits) > 1 else ""
        old, new = edit.old, edit.new
        if crlf:
            old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
        text, count = _apply_one(text, Replacement(old, new, edit.replace_all), label, shown)
        total += count
    if crlf:
        text = text.replace("\n", "\r\n")
    return text, total


def _apply_one(text: str, edit: Replacement, label: str, shown: str) -> tuple[str, int]:
    if not edit.old:
        raise ToolError(
            f"{label}old_string is empty. To create or replace a whole file use the write "
            "tool; to insert text, include a neighbouring line in old_string."
        )
    if edit.old == edit.new:
        raise ToolError(f"{label}old_string and new_string are identical; nothing would change.")
    count = text.count(edit.old)
    if count == 0:
        raise ToolError(_not_found_message(text, edit.old, label, shown))
    if count > 1 and not edit.replace_all:
        lines = _match_lines(text, edit.old)
        listed = ", ".join(str(n) for n in lines)
        more = ", …" if count > len(lines) else ""
        raise ToolError(
            f"{label}old_string occurs {count} times in {shown} (at lines {listed}{more}). "
            "Include more surrounding lines in old_string to make it unique, or set "
            "replace_all to true to replace every occurrence."
        )
    return text.replace(edit.old, edit.new, -1 if edit.replace_all else 1), count


def _match_lines(text: str, needle: str) -> list[int]:
    """1-based line numbers where ``needle`` starts (at most MAX_LISTED_LINES)."""
    lines: list[int] = []
    line, scanned, pos = 1, 0, text.find(needle)
    while pos >= 0 and len(lines) < MAX_LISTED_LINES:
        line += text.count("\n", scanned, pos)
        scanned = pos
        lines.append(line)
        pos = text.find(needle, pos + len(needle))
    return lines


def _not_found_message(text: str, needle: str, label: str, shown: str) -> str:
    message = f"{label}old_string was not found in {shown}."
    if _squash(needle) and _squash(needle) in _squash(text):
        message += (
            " It would match if whitespace at line starts/ends were ignored: check the indentation."
        )
    message += " Copy the exact text from the file (read it again if unsure)."
    candidates = closest_candidates(text, needle)
    if candidates:
        message += f" The closest lines are:\n{candidates}"
    return message


def _squash(text: str) -> str:
    return "\n".join(line.strip() for line in text.strip().split("\n"))


def closest_candidates(text: str, needle: str) -> str:
    """Numbered file lines most similar to the first non-blank line of ``needle``."""
    target = next((line.strip() for line in needle.split("\n") if line.strip()), "")
    if not target:
        return ""
    lines = text.split("\n")
    first_seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        first_seen.setdefault(line.strip(), number)
    first_seen.pop("", None)
    import difflib  # only when an edit's text was not found

    close = difflib.get_close_matches(target, list(first_seen), n=MAX_CANDIDATES, cutoff=0.5)
    span = min(max(needle.count("\n") + 1, 1), MAX_CANDIDATE_LINES)
    blocks = []
    for match in close:
        start = first_seen[match]
        window = lines[start - 1 : start - 1 + span]
        blocks.append("\n".join(f"{start + i:>6}\t{line}" for i, line in enumerate(window)))
    return "\n  ---\n".join(blocks)
