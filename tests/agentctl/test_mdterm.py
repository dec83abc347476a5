"""Streaming Markdown for the terminal: lines complete at their newline, fenced blocks and
tables once whole, however the text is chunked."""

from __future__ import annotations

from agentctl.render.mdterm import MarkdownStream

TEXT = (
    "Some **bold** and `code`.\n\n"
    "```python\nprint(1)\n\nx = 2\n```\n"
    "1. one\n2. two\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "last line"
)


def _render(chunks: list[str]) -> str:
    stream = MarkdownStream(width=60, color=False)
    return "".join(stream.feed(chunk) for chunk in chunks) + stream.flush()


def test_chunking_does_not_change_the_rendering() -> None:
    whole = _render([TEXT])
    assert _render(list(TEXT)) == whole
    assert _render([TEXT[:20], TEXT[20:41], TEXT[41:]]) == whole
    assert "Some bold and code." in whole
    assert "**" not in whole
    assert "```" not in whole
    assert " print(1)" in whole
    assert "2 two" in whole
    assert whole.rstrip().endswith("last line")


def test_partial_line_is_shown_raw_except_inside_blocks() -> None:
    stream = MarkdownStream(width=60, color=False)
    assert stream.feed("Some **bo") == ""
    assert stream.partial_line == "Some **bo"
    assert stream.feed("ld**\n```py") == "Some bold\n"
    assert stream.partial_line is None  # a fence is shown once closed
    assert stream.feed("\nx\n") == ""
    assert "x" in stream.feed("```\n")
    assert stream.partial_line == ""


def test_colour_uses_ansi_bold() -> None:
    stream = MarkdownStream(width=60, color=True)
    assert "\x1b[1mbold\x1b[0m" in stream.feed("**bold**\n")
