"""Exports: Markdown with every part of the branch, and one escaped, asset-free HTML page."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from agentd.protocol.content import AssistantMessage, ImageContent, UserMessage
from agentd.protocol.session_file import ModelChangeEntry, SessionInfoEntry
from agentd.protocol.tool_details import EditDetails
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
    assert "Model changed" not in text  # the starting model is in the facts, not an entry


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
    assert '<div class="call">bash</div><pre class="args">$ cat &lt;b&gt;.txt</pre>' in page
    assert '<pre class="output">output &lt;script&gt;' in page
    assert "Model changed" not in page
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


def test_html_renders_assistant_markdown_sanitised(session: SessionFile) -> None:
    """Bold, code fences and tables become markup; raw HTML, javascript: links and remote
    images do not."""
    text = (
        "**bold** and `code`\n\n```python\nprint('hi')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        f"{_EVIL}\n\n[click](javascript:alert(1)) [docs](https://example.org/x) "
        "![pixel](https://example.org/p.png)"
    )
    session.append_message(user("explain"))
    session.append_message(assistant(text, []))
    page = export_html(session)
    parsed = _Collector()
    parsed.feed(page)
    assert "<strong>bold</strong>" in page
    assert """<pre><code class="language-python">print('hi')""" in page
    assert "<table>" in page
    assert "script" not in parsed.tags
    assert "img" not in parsed.tags  # image syntax becomes a link: nothing loads by itself
    assert "javascript:" not in [value for name, value in parsed.attrs if name == "href"]
    hrefs = [value for name, value in parsed.attrs if name == "href"]
    assert hrefs == ["https://example.org/x", "https://example.org/p.png"]
    assert 'rel="noopener noreferrer" href="https://example.org/x"' in page
    assert not [value for name, value in parsed.attrs if name == "src"]


def test_html_shows_diffs_and_titles_the_page_with_the_first_prompt(
    session: SessionFile,
) -> None:
    session.append(ModelChangeEntry(provider="p1", model="m1"))
    session.append_message(user("Fix the greeting in app.py\nplease"))
    session.append_message(assistant("", [("c1", "edit", {"path": "app.py"})]))
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-print('hi')\n+print('hello')"
    details = EditDetails(
        path="app.py", replacements=1, diff=diff, first_changed_line=1, added=1, removed=1
    )
    session.append_message(result("c1", "Edited app.py.", details=details))
    session.append(ModelChangeEntry(provider="p1", model="m2"))
    page = export_html(session)
    assert "<title>Fix the greeting in app.py</title>" in page
    assert '<span class="del">-print(&#x27;hi&#x27;)</span>' in page
    assert '<span class="add">+print(&#x27;hello&#x27;)</span>' in page
    assert page.count("Model changed") == 1  # the later switch to m2 only
    assert "Model changed to p1/m2" in page
