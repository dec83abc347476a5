"""The last lines a tool call printed, as an indented ``⎿`` block under its call line.

Shown under every failed call (a command that exited non-zero, an error result) and, with
``--verbose``, under every call::

    ✗ bash  make test  exit 2 · 1.4s
      ⎿  … 40 lines above
         tests/test_x.py:12: AssertionError
         make: *** [test] Error 2

Pure functions over the result text the model saw; the caller has already escaped its
control characters (:func:`agentd.protocol.controls.scrub`), and this module keeps it that
way (it only cuts, indents and expands tabs).
"""

from __future__ import annotations

import re

from agentctl.render.style import Style
from agentd.protocol.tool_details import BashDetails, ToolDetails

DONE_MARK = "●"
FAILED_MARK = "✗"
"""A call's mark: done, or failed (an error, a non-zero exit, a timeout)."""

OUTPUT_LINES = 6
"""How many of the last output lines are shown."""

LINE_WIDTH = 160
"""Longest output line shown; longer ones are cut with ``…``."""

FIRST = "  ⎿  "
REST = "     "
_NOTE = re.compile(
    r"^\[(Exit code |Timed out after |Killed by |Working directory is now |Output truncated: )"
    r".*\]$"
)
"""The notes the bash tool appends after the output (the call line says what they say)."""


def output_text(text: str, details: ToolDetails | None) -> str:
    """What the call printed: for bash, its output without agentd's own bracketed notes
    (``[Exit code 3.]``, the truncation note: the call line says those) and without
    ``(no output)``; for other tools, the result text."""
    if not isinstance(details, BashDetails):
        return text.strip("\n")
    lines = text.rstrip("\n").split("\n")
    while lines and _NOTE.match(lines[-1]):
        lines.pop()
    body = "\n".join(lines).strip("\n")
    return "" if body == "(no output)" else body


def output_lines(text: str, style: Style, limit: int = OUTPUT_LINES) -> list[str]:
    """The ``⎿`` block of ``text``'s last ``limit`` non-blank-trailing lines (empty for no
    text), with a dim ``… N lines above`` first when some were left out."""
    lines = [line.rstrip() for line in text.expandtabs(4).rstrip().split("\n")]
    if not text.strip():
        return []
    hidden = max(0, len(lines) - limit)
    shown = [_cut(line) for line in lines[hidden:]]
    if hidden:
        more = f"… {hidden} line{'s' if hidden != 1 else ''} above"
        shown.insert(0, style.dim(more))
    return [(FIRST if i == 0 else REST) + line for i, line in enumerate(shown)]


def _cut(line: str) -> str:
    return line if len(line) <= LINE_WIDTH else line[: LINE_WIDTH - 1] + "…"


def redundant(text: str, outcome: str) -> bool:
    """True when the call line's outcome already says all of ``text`` (a one-line error)."""
    return "\n" not in text.strip() and text.strip() == outcome.strip()
