"""A hostile model reply on the real web chat page (real daemon, real Chromium): HTML that
tries to cover the approval buttons (``position: fixed``), to pass for them (the page's own
classes and ids, a ``<button>``) and to call home (an image beacon). Screenshots go to
``test-artifacts/web/``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import Home, scaled
from tests.vscode.model_html import (
    ATTACK_PROMPT,
    BEACON,
    COVERED_JS,
    FINDINGS_JS,
    write_scenarios,
)
from tests.web.conftest import WebDaemon, sign_in_browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, BrowserContext, sync_playwright  # noqa: E402

READY = "() => document.documentElement.dataset.ready === 'true'"


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebDaemon]:
    """A web daemon whose mock LLM knows the attack (on top of its built-in scenarios)."""
    home = Home()
    home.env["AGENTD_MOCK_SCENARIOS"] = str(write_scenarios(tmp_path / "scenarios.json"))
    daemon = WebDaemon(home)
    try:
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


@pytest.fixture
def context(web: WebDaemon) -> Iterator[BrowserContext]:
    with sync_playwright() as playwright:
        browser: Browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox"]
        )
        context = browser.new_context(viewport={"width": 1100, "height": 760})
        context.set_default_timeout(scaled(20) * 1000)
        sign_in_browser(context, web)
        yield context
        browser.close()


def test_model_html_cannot_cover_or_fake_the_approval_buttons(
    context: BrowserContext, web: WebDaemon, artifacts: Path
) -> None:
    session_id = web.new_session(permissionMode="ask")
    page = context.new_page()
    beacons: list[str] = []
    page.on("request", lambda r: beacons.append(r.url) if BEACON in r.url else None)
    page.goto(f"{web.base}/?cwd={web.home.project}#session={session_id}")
    page.wait_for_function(READY)
    box = page.get_by_role("textbox", name="Message")
    box.fill(ATTACK_PROMPT)
    box.press("Enter")
    asking = page.locator(".tool--asking")
    asking.wait_for()
    page.get_by_text("Here is the summary").wait_for()
    page.screenshot(path=str(artifacts / "model-html-attack.png"))
    assert page.evaluate(FINDINGS_JS) == []
    allow = ".tool--asking button[data-option='allow_once']"
    assert page.evaluate(COVERED_JS, allow) == ""
    asking.get_by_role("button", name="Allow", exact=True).click(timeout=scaled(5) * 1000)
    page.locator(".item--tool .tool-status", has_text="exit 0").wait_for()
    assert beacons == []
