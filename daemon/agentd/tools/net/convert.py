"""What a fetched body becomes for the model: HTML as Markdown, text and JSON as they are,
anything else refused.

HTML (``text/html``, ``application/xhtml+xml``, or an untyped body that starts like HTML) is
converted by ``html-to-markdown`` (imported on the first conversion): scripts, styles,
navigation and forms dropped; headings, lists, links, code blocks and tables kept. Text types
(``text/*``, JSON, XML, JavaScript) are decoded and passed through. A body with NUL bytes, or
of a media type that is neither (images, PDFs, archives), is refused with its type named.
"""

from __future__ import annotations

import re

from agentd.tools.base import ToolError

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
    }
)
_CHARSET = re.compile(r"charset=[\"']?([\w.:-]+)", re.IGNORECASE)
_SNIFF_HTML = re.compile(rb"^\s*(?:<!doctype html|<html|<head|<body|<!--)", re.IGNORECASE)


def media_type(content_type: str) -> str:
    """The bare media type of a ``Content-Type`` header, lower case."""
    return content_type.split(";", 1)[0].strip().lower()


def to_text(body: bytes, content_type: str) -> tuple[str, str]:
    """``(text, kind)`` for a body: kind ``markdown`` (converted HTML) or ``text``."""
    kind = media_type(content_type)
    is_html = kind in _HTML_TYPES or (kind in ("", "text/plain") and _SNIFF_HTML.match(body))
    is_text = kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml"))
    if not (is_html or is_text or kind == "") or b"\x00" in body[:8192]:
        raise ToolError(
            f"Refused: the response is binary ({kind or 'no type'}, {len(body)} bytes); "
            "web_fetch reads HTML, text and JSON only."
        )
    text = decode(body, content_type)
    if is_html:
        return html_to_markdown(text), "markdown"
    return text, "text"


def decode(body: bytes, content_type: str) -> str:
    """The body as text: the header's charset when known, else UTF-8 (bad bytes replaced)."""
    match = _CHARSET.search(content_type)
    if match:
        try:
            return body.decode(match.group(1), "replace")
        except LookupError:
            pass
    return body.decode("utf-8", "replace")


def html_to_markdown(html: str) -> str:
    """Clean Markdown of an HTML page (see the module docstring)."""
    import html_to_markdown as converter

    options = converter.ConversionOptions(
        extract_metadata=False,
        exclude_selectors=["script", "style", "noscript", "template", "iframe", "svg", "nav"],
        preprocessing=converter.PreprocessingOptions(
            enabled=True, preset="standard", remove_navigation=True, remove_forms=True
        ),
    )
    result = converter.convert(html, options)
    return _BLANKS.sub("\n\n", result.content or "").strip() + "\n"


_BLANKS = re.compile(r"\n{3,}")
