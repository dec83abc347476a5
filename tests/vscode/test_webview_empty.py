"""The webview's empty state says what to do, and a narrow chat never cuts an approval's path
to a letter (headless Chromium with the webview bundle, events recorded from the real daemon).
Screenshots go to ``editors/vscode/test-results/``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import scaled
from tests.vscode.codeserver import EXTENSION, chromium
from tests.vscode.conftest import build_extension
from tests.vscode.webview_harness import as_session, record, serve_harness

ARTIFACTS = EXTENSION / "test-results"


@pytest.fixture(scope="module")
def harness_url() -> Iterator[str]:
    if chromium() is None:
        pytest.skip("no chromium on PATH (apt install chromium)")
    build_extension()
    with serve_harness() as url:
        yield url


def _page(playwright: Any, url: str, width: int) -> Any:
    """The harness with its chat ``width`` px wide (the harness sizes <body> as a side bar)."""
    browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(scaled(30) * 1000)  # a loaded machine
    page.goto(url)
    page.wait_for_selector("html[data-ready='true']")
    page.evaluate("(width) => { document.body.style.width = `${width}px`; }", width)
    return page


def test_the_empty_chat_says_what_to_do(harness_url: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        page = _page(playwright, harness_url, 420)
        hint = page.get_by_role("note")
        assert hint.is_visible()
        text = hint.inner_text()
        assert "type it below and press Enter" in text
        assert "agentd: Send Selection" in text
        assert "Ctrl+Alt+A" in text
        page.screenshot(path=str(ARTIFACTS / "webview-empty.png"))
        events = as_session(record("how are you", tmp_path / "chat.jsonl"))
        page.evaluate("(events) => feed(events)", events)
        page.get_by_text("What shall we work on?").wait_for()
        assert not hint.is_visible()
        page.context.browser.close()


def test_a_narrow_chat_keeps_the_approval_path_readable(harness_url: str, tmp_path: Path) -> None:
    """At 280 px (a narrow side bar) the card's head keeps a readable part of the path and the
    approval shows it whole."""
    from playwright.sync_api import sync_playwright

    events = as_session(record("hello world", tmp_path / "ask.jsonl", mode="ask"))
    ask_at = next(i for i, e in enumerate(events) if e["event"]["type"] == "permission_request")
    with sync_playwright() as playwright:
        page = _page(playwright, harness_url, 280)
        page.evaluate("(events) => feed(events)", events[: ask_at + 1])
        card = page.locator("article.item--tool.tool--asking")
        card.wait_for()
        page.screenshot(path=str(ARTIFACTS / "webview-narrow-approval.png"))
        summary = card.locator(".tool-summary")
        size = summary.evaluate(
            "(n) => n.getBoundingClientRect().width / parseFloat(getComputedStyle(n).fontSize)"
        )
        assert size >= 6, f"the path in the head is {size:.1f} em wide"
        assert card.locator(".approval-path").inner_text() == "hello.py"
        assert (
            card.locator(".approval-diff .diff-add").inner_text().strip()
            == "+print('Hello, World!')"
        )
        page.context.browser.close()
