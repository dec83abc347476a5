"""A hook's block in the VS Code chat webview (its bundle in headless Chromium), fed the event
stream of a real run: ``agentctl send --json`` against a daemon whose user config blocks
writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.agentctl.harness import Sandbox, json_lines
from tests.harness import scaled
from tests.hooks.conftest import hook, script
from tests.vscode.codeserver import EXTENSION, chromium
from tests.vscode.conftest import build_extension
from tests.vscode.webview_harness import as_session, serve_harness

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def harness_url() -> Iterator[str]:
    if chromium() is None:
        pytest.skip("no chromium on PATH (apt install chromium)")
    build_extension()
    with serve_harness() as url:
        yield url


def recorded_block() -> list[dict[str, Any]]:
    """The session events of "hello world" with a pre_tool hook blocking ``write``."""
    box = Sandbox()
    try:
        policy = script(box.root, "no-writes.sh", 'echo "writes need a review" >&2\nexit 2\n')
        box.user_config(hook("pre_tool", str(policy), matcher="write"))
        result = box.run("send", "--stdio", "--provider", "mock", "--json", "hello world")
        assert result.returncode == 0, result.stderr
        return [line for line in json_lines(result.stdout) if "event" in line]
    finally:
        box.close()


def test_a_block_is_a_card_in_the_webview(harness_url: str) -> None:
    from playwright.sync_api import sync_playwright

    events = as_session(recorded_block())
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 420, "height": 900})
        page.set_default_timeout(scaled(30) * 1000)  # a loaded machine
        page.goto(harness_url)
        page.wait_for_selector("html[data-ready='true']")
        page.evaluate("(events) => feed(events)", events)
        card = page.locator(".notice--blocked")
        card.wait_for()
        assert card.inner_text().startswith("⊘ pre_tool hook blocked write: writes need a review (")
        write = page.locator("article.item--tool", has_text="write").first
        assert write.locator(".tool-status").inner_text() == "failed"
        (EXTENSION / "test-results").mkdir(exist_ok=True)
        page.screenshot(path=str(EXTENSION / "test-results" / "webview-hook-block.png"))
        browser.close()
