"""Terminal styling: ANSI colours that switch off for pipes and ``NO_COLOR``.

Imports only the standard library, so the fast paths of the CLI can use it.
"""

from __future__ import annotations

import os
import shutil
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


def terminal_width(default: int = 100) -> int:
    """Columns of the controlling terminal, or ``default`` when unknown."""
    return shutil.get_terminal_size((default, 24)).columns


def terminal_height(default: int = 24) -> int:
    """Rows of the controlling terminal, or ``default`` when unknown."""
    return shutil.get_terminal_size((100, default)).lines


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
