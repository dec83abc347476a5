"""Exports: Markdown with every part of the branch, and one escaped, asset-free HTML page."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from agentd.protocol.content import AssistantMessage, ImageContent, UserMessage
from agentd.protocol.session_file import ModelChangeEntry, SessionInfoEntry
from agentd.store import SessionFile, export_html, export_markdown
from tests.store.conftest import CWD, assistant, result, user

_EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _fill(session: SessionFile) -> None:
    session.append(SessionInfoEntry(title=f"Title {_EVIL}"))
    session.append(ModelChangeEntry(provider="p1", model="m1"))
    session.append_message(user(f"Please look at {_EVIL}"))
    session.append_message(
        assistant("Running ```code``` now", [("c1", "bash", {"command": "cat <b>.txt"})])
    )
    session.append_message(result("c1", f"output {_EVIL}\nline 2"))
    session.append_message(assistant("", [("c2", "bash", {"command": "false"})]))
    session.append_message(result("c2", "exit code 1: boom", is_error=True))
    session.append_compaction("Summary of what happened", "nothing-kept")
    session.append_message(
        AssistantMessage(
            id="err",
            content=[],
            provider="p1",
            model="m1",
            stop_reason="error",
            error_message="rate limited",
        )
    )


def test_markdown_has_metadata_messages_tool_calls_results_and_errors(
    session: SessionFile,
) -> None:
    """Every entry on the branch is rendered; fences survive backticks in content."""
    _fill(session)
    text = export_markdown(session)
    assert text.startswith(f"# Title {_EVIL}\n")
    for expected in [
        "- **Session:** s1",
        f"- **Directory:** {CWD}",
        f"- **Created:** {session.header.created_at}",
        "- **Model:** p1/m1",
        "*Model changed to p1/m1.*",
        "## User",
        f"Please look at {_EVIL}",
        "## Assistant",
        "Running ```code``` now",
        "### Tool call `bash`",
        '  "command": "cat <b>.txt"',
        "### Result of `bash`",
        f"output {_EVIL}\nline 2",
        "### Result of `bash` (error)",
        "exit code 1: boom",
        "## Summary of earlier messages",
        "> Summary of what happened",
        "**Error:** rate limited",
    ]:
        assert expected in text, expected


def test_markdown_fence_is_longer_than_any_backtick_run(session: SessionFile) -> None:
    """A tool result containing ``` cannot close its own code block."""
    session.append_message(result("c9", "a ```` b"))
    assert "`````\na ```` b\n`````" in export_markdown(session)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_escapes_everything_and_needs_no_external_assets(session: SessionFile) -> None:
    """Content HTML never becomes markup: no script, no injected img, no external URL."""
    _fill(session)
    page = export_html(session)
    parsed = _Collector()
    parsed.feed(page)
    assert "script" not in parsed.tags
    assert "img" not in parsed.tags
    assert "link" not in parsed.tags
    assert not [value for name, value in parsed.attrs if name in {"src", "href", "onerror"}]
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert not re.search(r"https?://", page)
    assert page.count("<style>") == 1
    text = "".join(parsed.text)
    assert f"Please look at {_EVIL}" in text
    assert f"Title {_EVIL}" in text


def test_html_structure_roles_details_and_errors(session: SessionFile) -> None:
    """Role-styled sections, collapsible tool calls and results, errors highlighted."""
    _fill(session)
    page = export_html(session)
    assert page.startswith("<!DOCTYPE html>")
    assert (
        f"<title>Title {_EVIL.replace('<', '&lt;').replace('>', '&gt;')}".replace('"', "&quot;")
        in page
    )
    assert 'class="entry user"' in page
    assert 'class="entry assistant"' in page
    assert 'class="entry tool error"' in page
    assert 'class="entry assistant error"' in page
    assert "<details><summary>tool call: bash</summary>" in page
    assert "cat &lt;b&gt;.txt" in page
    assert "<details open><summary>result of bash (error)</summary>" in page
    assert "rate limited" in page
    assert f"<dd>{CWD}</dd>" in page


def test_html_inlines_valid_images_only(session: SessionFile) -> None:
    """Images become data URIs; odd MIME types or data are shown as a placeholder."""
    good = ImageContent(data="aGVsbG8=", mime_type="image/png")
    bad_type = ImageContent(data="aGVsbG8=", mime_type='text/html"><script>')
    bad_data = ImageContent(data='x" onerror="alert(1)', mime_type="image/png")
    session.append_message(UserMessage(id="i", content=[good, bad_type, bad_data], timestamp=0))
    page = export_html(session)
    assert '<img alt="image" src="data:image/png;base64,aGVsbG8=">' in page
    assert page.count("<img") == 1
    assert "[image: text/html&quot;&gt;&lt;script&gt;]" in page
    assert "*[image: image/png]*" in export_markdown(session)


def test_exports_of_an_empty_session(session: SessionFile) -> None:
    """A session with no entries still gives a complete document."""
    assert export_markdown(session).startswith("# Session s1\n")
    assert export_html(session).rstrip().endswith("</html>")
