"""A hook's block in the web chat (real Chromium, real daemon): a card in the transcript
(the VS Code webview mounts the same chat UI, so it shows the same card)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import Home
from tests.hooks.conftest import hook, script
from tests.web.conftest import WebDaemon
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
