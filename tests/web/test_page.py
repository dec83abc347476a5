"""The chat page in real Chromium (Playwright, the system browser) against a real daemon.

Skipped only when no ``chromium`` is installed (``.ci/system-packages`` installs it in CI).
Screenshots go to ``test-artifacts/web/`` (gitignored).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.harness import scaled
from tests.web.chat_page import CHROMIUM, IDLE, READY, browser, open_page, send  # noqa: F401
from tests.web.conftest import WebDaemon, sign_in_browser

SLOW_TEXT = (
    "This reply streams slowly, one small piece at a time, so there is plenty of time to "
    "cancel it before it ends."
)
WATCH_REPLY = """() => {
  window.replyLengths = [];
  new MutationObserver(() => {
    const reply = document.querySelector('.item--assistant');
    if (reply) window.replyLengths.push(reply.textContent.trim().length);
  }).observe(document.querySelector('.log'), {subtree: true, childList: true, characterData: true});
}"""


@pytest.fixture
def context(browser: Browser, web: WebDaemon) -> Iterator[BrowserContext]:  # noqa: F811
    """A browser profile signed in to ``web``."""
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    context.set_default_timeout(scaled(20) * 1000)
    sign_in_browser(context, web)
    yield context
    context.close()


def shoot(page: Page, artifacts: Path, name: str) -> None:
    for scheme in ("dark", "light"):
        page.emulate_media(color_scheme=scheme)
        page.screenshot(path=str(artifacts / f"{name}-{scheme}.png"))


def test_a_prompt_streams_text_then_tool_cards(
    context: BrowserContext, web: WebDaemon, artifacts: Path
) -> None:
    page = open_page(context, web)
    page.evaluate(WATCH_REPLY)
    send(page, "take a moment")
    page.wait_for_function(IDLE)
    reply = "Let me think about this for a moment."
    expect(page.locator(".item--assistant").last).to_have_text(reply)
    lengths = page.evaluate("() => window.replyLengths")
    assert len(set(lengths)) >= 3, lengths  # it grew over several frames
    assert max(lengths) == len(reply)
    assert "#session=" in page.url
    send(page, "hello world")
    cards = page.locator(".item--tool")
    expect(cards).to_have_count(2)
    expect(cards.nth(0).locator(".tool-name")).to_have_text("write")
    expect(cards.nth(0).locator(".tool-summary")).to_have_text("hello.py")
    expect(cards.nth(1).locator(".tool-output")).to_have_text("Hello, World!")
    expect(page.locator(".item--assistant").last).to_contain_text("Done!")
    page.wait_for_function(IDLE)
    expect(cards.nth(1).locator(".tool-status")).to_have_text("exit 0")
    expect(page.locator(".item--user")).to_have_count(2)
    expect(page.locator(".session")).to_have_count(1)
    expect(page.locator(".cost")).to_contain_text(" in · ")
    shoot(page, artifacts, "prompt")


def test_approve_one_tool_call_and_reject_the_next(
    context: BrowserContext, web: WebDaemon, artifacts: Path
) -> None:
    session_id = web.new_session(permissionMode="ask")
    page = open_page(context, web, session_id)
    send(page, "write two notes")
    asking = page.locator(".tool--asking")
    expect(asking).to_have_count(1)
    expect(asking.get_by_role("group")).to_have_attribute("aria-label", "Approve write?")
    shoot(page, artifacts, "approval")
    asking.get_by_role("button", name="Allow", exact=True).click()
    expect(page.locator(".item--tool").nth(1).locator(".tool-permission button")).to_have_count(
        5
    )  # allow, always here, always in the project, reject, always reject
    page.locator(".tool--asking").get_by_role("button", name="Reject", exact=True).click()
    page.wait_for_function(IDLE)
    cards = page.locator(".item--tool")
    expect(cards.nth(0).locator(".tool-status")).to_have_text("done")
    expect(cards.nth(1).locator(".tool-status")).to_have_text("rejected")
    assert (web.home.project / "a.txt").read_text() == "a\n"
    assert not (web.home.project / "b.txt").exists()


def test_escape_cancels_a_slow_stream(context: BrowserContext, web: WebDaemon) -> None:
    page = open_page(context, web)
    send(page, "be slow")
    reply = page.locator(".item--assistant.streaming")
    expect(reply).to_contain_text("This reply")
    expect(page.get_by_role("button", name="Stop")).to_be_visible()
    page.keyboard.press("Escape")
    page.wait_for_function(IDLE)
    expect(page.locator(".cost")).to_contain_text("last run: cancelled")
    assert page.locator(".item--assistant").inner_text() != SLOW_TEXT
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()


def test_a_reload_mid_run_picks_the_run_up(context: BrowserContext, web: WebDaemon) -> None:
    page = open_page(context, web)
    send(page, "be slow")
    streaming = page.locator(".item--assistant.streaming")
    expect(streaming).to_contain_text("one small piece", timeout=scaled(20) * 1000)
    page.reload()
    page.wait_for_function(READY)
    expect(page.locator(".item--assistant.streaming")).to_have_count(1)
    page.wait_for_function(IDLE, timeout=scaled(30) * 1000)
    replies = page.locator(".item--assistant")
    expect(replies).to_have_count(1)
    expect(replies).to_have_text(SLOW_TEXT)
    expect(page.locator(".item--user")).to_have_text("be slow")


def test_two_tabs_on_one_session_see_the_same_events(
    context: BrowserContext, web: WebDaemon
) -> None:
    session_id = web.new_session()
    first = open_page(context, web, session_id)
    second = open_page(context, web, session_id)
    send(first, "hello world")
    for page in (first, second):
        expect(page.locator(".item--tool")).to_have_count(2)
        expect(page.locator(".item--assistant").last).to_contain_text("Done!")
        page.wait_for_function(IDLE)
    assert first.locator(".log").inner_text() == second.locator(".log").inner_text()
    send(second, "how are you")
    expect(first.locator(".item--assistant").last).to_contain_text("doing well")


def test_steer_and_follow_up_while_running(context: BrowserContext, web: WebDaemon) -> None:
    page = open_page(context, web)
    send(page, "be slow")
    expect(page.locator(".item--assistant.streaming")).to_contain_text("This reply")
    expect(page.get_by_role("button", name="Steer")).to_be_visible()
    send(page, "how are you")  # Enter while running steers
    box = page.get_by_role("textbox", name="Message")
    box.fill("hello world")
    page.get_by_role("button", name="Queue").click()
    expect(page.locator(".queue")).to_contain_text("steer: how are you")
    expect(page.locator(".queue")).to_contain_text("next: hello world")
    page.wait_for_function(IDLE, timeout=scaled(40) * 1000)
    expect(page.locator(".item--user")).to_have_text(["be slow", "how are you", "hello world"])
    expect(page.locator(".item--tool")).to_have_count(2)
    expect(page.locator(".queue li")).to_have_count(0)


def test_shift_enter_is_a_new_line_and_enter_sends(context: BrowserContext, web: WebDaemon) -> None:
    """Shift+Enter adds a line to the message; Enter sends both lines as one prompt."""
    page = open_page(context, web)
    box = page.get_by_role("textbox", name="Message")
    box.fill("how are you")
    box.press("Shift+Enter")
    box.type("today")
    expect(box).to_have_value("how are you\ntoday")
    expect(page.locator(".item--user")).to_have_count(0)
    box.press("Enter")
    expect(page.locator(".item--user")).to_have_count(1)
    expect(page.locator(".item--user").first).to_contain_text("today")
    expect(box).to_have_value("")
    page.wait_for_function(IDLE)
