"""Assistant Markdown on a terminal, rendered line by line as it streams.

:class:`MarkdownStream` collects streamed text and hands back the rendering of each completed
unit: a line, a fenced code block, or a table (rich's Markdown renderer: bold, code spans,
highlighted code, lists, headings, quotes, tables). The line still being written is available
raw (:attr:`MarkdownStream.partial_line`) so it can be shown live and replaced once complete.
rich is imported on the first rendered unit, so commands that never render Markdown on a
terminal (``--version``, pipes, ``--json``) never load it.
"""

from __future__ import annotations

import io
import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TRAILING_SPACES = re.compile(r" +(?=\n)")


class MarkdownStream:
    """Streamed Markdown in, rendered complete units out (``color`` False: no ANSI codes)."""

    def __init__(self, *, width: int, color: bool) -> None:
        self.width = width
        self.color = color
        self._pending = ""

    @property
    def partial_line(self) -> str | None:
        """The unfinished text when it is a plain line shown as typed; None inside a code
        fence or a table (shown once complete)."""
        if "\n" in self._pending or _opens_block(self._pending):
            return None
        return self._pending

    def feed(self, text: str) -> str:
        """Add ``text``; return the rendering of the units it completed (maybe empty)."""
        self._pending += text
        cut = _complete_prefix(self._pending)
        if cut == 0:
            return ""
        done, self._pending = self._pending[:cut], self._pending[cut:]
        return self._render_units(done)

    def flush(self) -> str:
        """Render whatever is left (at the end of the message)."""
        done, self._pending = self._pending, ""
        return self._render_units(done + "\n") if done.strip() else ""

    def _render_units(self, text: str) -> str:
        out = []
        for unit in _units(text):
            out.append(self._render(unit) if unit.strip() else "\n")
        return "".join(out)

    def _render(self, text: str) -> str:
        from rich.console import Console
        from rich.markdown import Markdown

        out = io.StringIO()
        console = Console(
            file=out,
            width=self.width,
            force_terminal=self.color,
            no_color=not self.color,
            color_system="standard" if self.color else None,
            highlight=False,
            emoji=False,
        )
        console.print(Markdown(text, code_theme="ansi_dark"))
        return _TRAILING_SPACES.sub("", out.getvalue()).strip("\n") + "\n"


def _opens_block(line: str) -> bool:
    return bool(_FENCE.match(line)) or line.lstrip().startswith("|")


def _units(text: str) -> list[str]:
    """``text`` (complete lines) cut into lines, fenced blocks and tables."""
    units: list[str] = []
    current = ""
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        if fence is not None:
            current += line
            if _closes(line.strip(), fence):
                units.append(current)
                current, fence = "", None
            continue
        if current and not line.lstrip().startswith("|"):
            units.append(current)  # a table ended
            current = ""
        marker = _FENCE.match(line)
        if marker:
            fence, current = marker.group(1), line
        elif line.lstrip().startswith("|"):
            current += line
        else:
            units.append(line)
    if current:
        units.append(current)
    return units


def _closes(line: str, fence: str) -> bool:
    """True when ``line`` (stripped) is a closing fence for ``fence``."""
    return len(line) >= len(fence) and set(line) == {fence[0]}


def _complete_prefix(text: str) -> int:
    """Length of the leading part of ``text`` made of complete units (0: none yet)."""
    fence: str | None = None
    end = 0
    offset = 0
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        offset += len(line)
        if fence is not None:
            if _closes(line.strip(), fence):
                fence, end = None, offset
            continue
        marker = _FENCE.match(line)
        if marker:
            fence = marker.group(1)
        elif not line.lstrip().startswith("|"):  # a table completes at its first other line
            end = offset
    return end
