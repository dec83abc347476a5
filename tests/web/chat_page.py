"""Helpers of the chat page tests that run at a desktop and a phone width (real Chromium via
Playwright against a real daemon): the browser, a signed-in context per width, opening the
page, sending, screenshots (``test-artifacts/web/``, gitignored)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import scaled
from tests.web.conftest import WebDaemon, sign_in_browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright  # noqa: E402

READY = "() => document.documentElement.dataset.ready === 'true'"
IDLE = "() => !document.querySelector('.agentd-chat form').classList.contains('running')"
WIDTHS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
"""The two widths every page test of the web chat's layout runs at."""

PICKER_FITS = """(select) => {
  const style = getComputedStyle(select);
  const context = document.createElement('canvas').getContext('2d');
  context.font = `${style.fontSize} ${style.fontFamily}`;
  const chosen = select.options[select.selectedIndex]?.text ?? '';
  const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
  // what the chosen model's name needs: its text, the padding and the drop-down arrow
  return { chosen, need: Math.ceil(context.measureText(chosen).width + padding + 20),
           have: select.getBoundingClientRect().width };
}"""
"""The width the model picker has and the width its chosen model's name needs (px)."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture(params=sorted(WIDTHS))
def width(request: pytest.FixtureRequest) -> str:
    """``desktop`` (1280 px) or ``phone`` (390 px)."""
    return str(request.param)


def new_context(browser: Browser, web: WebDaemon, width: str) -> BrowserContext:
    """A browser profile at ``width`` signed in to ``web`` (a phone one has touch)."""
    phone = width == "phone"
    context = browser.new_context(viewport=WIDTHS[width], has_touch=phone, is_mobile=phone)
    context.set_default_timeout(scaled(20) * 1000)
    sign_in_browser(context, web)
    return context


def open_page(context: BrowserContext, web: WebDaemon, session_id: str | None = None) -> Page:
    """The chat page, ready, with no script error."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    hash_part = f"#session={session_id}" if session_id else ""
    page.goto(f"{web.base}/?cwd={web.home.project}{hash_part}")
    page.wait_for_function(READY)
    assert errors == []
    return page


def send(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")


def shoot(page: Page, artifacts: Path, name: str) -> Path:
    """A screenshot of the page (light scheme); its path."""
    path = artifacts / f"{name}.png"
    page.screenshot(path=str(path))
    return path
