"""A hook's block in the web chat (real Chromium, real daemon): a card in the transcript
(the VS Code webview mounts the same chat UI, so it shows the same card)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import Home
from tests.hooks.conftest import hook, script
from tests.web.conftest import WebDaemon, sign_in_browser
from tests.web.test_page import IDLE, open_page, send, shoot

pytest.importorskip("playwright")
from playwright.sync_api import BrowserContext, expect

from tests.web.test_page import browser, context  # noqa: F401  (fixtures)


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    """A web daemon whose user config blocks every write."""
    home = Home()
    policy = script(
        home.root,
        "no-writes.sh",
        'echo \'{"decision": "block", "reason": "writes need a review first"}\'\n',
    )
    home.user_config(hook("pre_tool", str(policy), matcher="write|edit"))
    daemon = WebDaemon(home)
    try:
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    path = Path(__file__).resolve().parents[2] / "test-artifacts" / "hooks"
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_a_blocked_call_shows_as_a_card(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    page = open_page(context, web)
    send(page, "hello world")
    page.wait_for_function(IDLE)
    card = page.locator(".notice--blocked")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("⊘ pre_tool hook blocked write: writes need a review first")
    expect(card).to_contain_text("no-writes.sh")
    tool = page.locator(".item--tool")
    expect(tool.first).to_contain_text("write")
    assert not (web.home.project / "hello.py").exists()
    shoot(page, artifacts, "hook-block")


def test_a_reopened_chat_shows_each_block_once_where_it_happened(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    """A reload (history, then the daemon's buffered events replayed) and a reopen after a
    daemon restart (history only, from the session file) both show the block once, after the
    blocked call's card."""
    page = open_page(context, web)
    send(page, "hello world")
    expect(page.locator(".notice--blocked")).to_have_count(1)
    page.wait_for_function(IDLE)
    [session] = web.rpc("session/list", {})["sessions"]
    order = ".item--tool, .notice--blocked"
    page.reload()
    page.wait_for_function(IDLE)
    expect(page.locator(".notice--blocked")).to_have_count(1)
    web.close()
    again = WebDaemon(web.home, config="")
    try:
        sign_in_browser(context, again)
        reopened = open_page(context, again, session["sessionId"])
        card = reopened.locator(".notice--blocked")
        expect(card).to_have_count(1)
        expect(card).to_contain_text("⊘ pre_tool hook blocked write: writes need a review first")
        kinds = reopened.locator(order).evaluate_all(
            "nodes => nodes.map(n => n.classList.contains('item--tool') ? 'tool' : 'block')"
        )
        assert kinds[:2] == ["tool", "block"]  # right after the blocked write's card
        expect(reopened.locator(".item--tool").first).to_contain_text("write")
        shoot(reopened, artifacts, "hook-block-reopened")
    finally:
        again.close()
