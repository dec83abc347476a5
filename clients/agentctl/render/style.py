"""Terminal styling: ANSI colours that switch off for pipes and ``NO_COLOR``.

Imports only the standard library, so the fast paths of the CLI can use it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

_RESET = "\x1b[0m"


def wants_color(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """True when ``stream`` is a terminal and ``NO_COLOR`` is unset or empty.

    The same test decides whether spinners run: pipes and ``NO_COLOR`` get plain text.
    """
    environ = os.environ if env is None else env
    if environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _terminal_size(name: str, index: int, default: int) -> int:
    """``shutil.get_terminal_size``'s rule for one dimension (``$COLUMNS``/``$LINES``, then
    stdout's terminal, then ``default``) without importing ``shutil`` (it loads bz2 and lzma)."""
    try:
        given = int(os.environ.get(name, "0"))
    except ValueError:
        given = 0
    if given > 0:
        return given
    try:
        size = os.get_terminal_size(1)[index]
    except (OSError, ValueError):
        return default
    return size or default


def terminal_width(default: int = 100) -> int:
    """Columns of the controlling terminal, or ``default`` when unknown."""
    return _terminal_size("COLUMNS", 0, default)


def terminal_height(default: int = 24) -> int:
    """Rows of the controlling terminal, or ``default`` when unknown."""
    return _terminal_size("LINES", 1, default)


class Style:
    """Wraps text in ANSI colour codes when enabled; returns it unchanged otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def paint(self, text: str, code: str) -> str:
        """``text`` in the SGR colour ``code`` (for example ``"31"`` for red)."""
        if not self.enabled or not text:
            return text
        return f"\x1b[{code}m{text}{_RESET}"

    def red(self, text: str) -> str:
        return self.paint(text, "31")

    def green(self, text: str) -> str:
        return self.paint(text, "32")

    def yellow(self, text: str) -> str:
        return self.paint(text, "33")

    def cyan(self, text: str) -> str:
        return self.paint(text, "36")

    def bold(self, text: str) -> str:
        return self.paint(text, "1")

    def dim(self, text: str) -> str:
        return self.paint(text, "2")
