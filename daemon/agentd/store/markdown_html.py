"""Assistant Markdown as safe HTML for the session export.

CommonMark plus tables and strikethrough (markdown-it-py). Raw HTML in the text is escaped,
never passed through; link targets are checked by markdown-it (no ``javascript:``,
``vbscript:``, ``file:`` or non-image ``data:`` URLs) and get ``rel="noopener noreferrer"``;
image syntax stays text, so opening the page never loads anything from the network.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    parser.enable(["table", "strikethrough"])
    parser.disable("image")
    return parser


def markdown_to_html(text: str) -> str:
    """``text`` rendered as sanitised HTML (see the module docstring)."""
    rendered: str = _parser().render(text)
    return rendered.replace("<a href=", '<a rel="noopener noreferrer" href=')
