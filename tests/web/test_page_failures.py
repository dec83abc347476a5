"""Failures look like failures, in the real page at 1280 and 390 px: a bash card with a non-zero
exit is marked failed (colour and label), a provider's 500 is shown once, a cancelled reply
says "cancelled" where its text stopped, a 429's retry countdown shows once and counts down."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from tests.harness import scaled
from tests.scenarios import tool_call
from tests.web.chat_page import IDLE, browser, new_context, open_page, send, shoot, width
from tests.web.conftest import WebDaemon, web_daemon

__all__ = ["browser", "width"]  # fixtures

EXIT_3 = "echo oops; exit 3"
SCENARIOS = [
    {
        "name": "bash-fails",
        "trigger": "exit three",
        "steps": [
            {"response": {"content": "", "tool_calls": [tool_call("bash", {"command": EXIT_3})]}},
            {"response": {"content": "It failed."}},
        ],
    },
    {
        "name": "rate-limited-slowly",
        "trigger": "throttled",
        "fail": [{"status": 429, "retry_after": 4, "message": "Rate limit reached"}],
        "steps": [{"response": {"content": "Finally through."}}],
    },
]


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    with web_daemon(SCENARIOS) as daemon:
        yield daemon


@pytest.fixture
def context(browser: Browser, web: WebDaemon, width: str) -> Iterator[BrowserContext]:
    context = new_context(browser, web, width)
    yield context
    context.close()


WATCH_RETRIES = """() => {
  window.retryTexts = new Set();
  new MutationObserver(() => {
    const shown = document.querySelectorAll('.item--retry, .msg-retry');
    for (const n of shown) window.retryTexts.add(n.textContent);
  }).observe(document.querySelector('.log'), {subtree: true, childList: true, characterData: true});
}"""


def red(color: str) -> bool:
    """Whether a computed ``rgb(r, g, b)`` colour is a red (the danger colour)."""
    r, g, b = (int(part) for part in color[color.index("(") + 1 : color.index(")")].split(",")[:3])
    return r > 150 and g < 100 and b < 100


def test_a_bash_card_with_exit_3_is_marked_failed(
    context: BrowserContext, web: WebDaemon, width: str, artifacts: Path
) -> None:
    page = open_page(context, web)
    send(page, "hello world")
    expect(page.locator(".item--assistant").last).to_contain_text("Done!")
    page.wait_for_function(IDLE)
    send(page, "exit three")
    expect(page.locator(".item--assistant").last).to_contain_text("It failed.")
    page.wait_for_function(IDLE)
    cards = page.locator(".item--tool")
    ok, failed = cards.filter(has_text="python3 hello.py"), cards.filter(has_text="exit 3")
    expect(failed.locator(".tool-status")).to_have_text("failed · exit 3")
    assert "tool--failed" in (failed.get_attribute("class") or "")
    assert "tool--failed" not in (ok.get_attribute("class") or "")
    expect(ok.locator(".tool-status")).to_have_text("exit 0")
    assert red(failed.locator(".tool-status").evaluate("(n) => getComputedStyle(n).color"))
    assert not red(ok.locator(".tool-status").evaluate("(n) => getComputedStyle(n).color"))
    assert red(failed.evaluate("(n) => getComputedStyle(n).borderLeftColor"))
    failed.scroll_into_view_if_needed()
    shoot(page, artifacts, f"failed-card-{width}")


def test_a_provider_500_is_shown_once(
    context: BrowserContext, web: WebDaemon, width: str, artifacts: Path
) -> None:
    page = open_page(context, web)
    send(page, "server error")
    expect(page.locator(".cost")).to_contain_text("last run: error")
    page.wait_for_function(IDLE)
    expect(page.locator(".msg-error")).to_have_count(1)
    message = page.locator(".msg-error").inner_text()
    assert "500" in message, message
    log_text = page.locator(".log").inner_text()
    assert log_text.count("Internal server error") == 1, log_text
    expect(page.locator(".item--notice")).to_have_count(0)
    shoot(page, artifacts, f"provider-500-{width}")
    page.reload()
    page.wait_for_function("() => document.documentElement.dataset.ready === 'true'")
    expect(page.locator(".msg-error")).to_have_count(1)  # the same from the history


def test_a_cancelled_reply_says_so_where_it_stopped(
    context: BrowserContext, web: WebDaemon, width: str, artifacts: Path
) -> None:
    page = open_page(context, web)
    send(page, "be slow")
    expect(page.locator(".item--assistant.streaming")).to_contain_text("This reply")
    page.get_by_role("button", name="Stop").click()
    page.wait_for_function(IDLE)
    reply = page.locator(".item--assistant").last
    mark = reply.locator(".msg-cancelled")
    expect(mark).to_have_text("cancelled")
    # The mark sits on the last line of the text, right after its last word.
    text_box = reply.locator(".md p").last.bounding_box()
    mark_box = mark.bounding_box()
    assert text_box
    assert mark_box
    top, bottom = text_box["y"], text_box["y"] + text_box["height"]
    assert top <= mark_box["y"] <= bottom, (text_box, mark_box)
    shoot(page, artifacts, f"cancelled-{width}")


def test_a_429_shows_one_countdown(
    context: BrowserContext, web: WebDaemon, width: str, artifacts: Path
) -> None:
    page = open_page(context, web)
    page.evaluate(WATCH_RETRIES)
    send(page, "throttled")
    retry = page.locator(".item--retry:visible, .msg-retry:visible")
    expect(retry).to_have_count(1)
    expect(retry).to_contain_text("Rate limit reached")
    expect(retry).to_contain_text("retrying in")
    expect(page.locator(".chat-status")).not_to_contain_text("Retry")
    shoot(page, artifacts, f"retry-{width}")
    reply = page.locator(".item--assistant").last
    expect(reply).to_contain_text("Finally through.", timeout=scaled(30) * 1000)
    page.wait_for_function(IDLE)
    expect(retry).to_have_count(0)  # over: the reply took its place
    texts = page.evaluate("[...window.retryTexts]")
    seconds = {int(t.split("retrying in ")[1].split(" s")[0]) for t in texts if "retrying in" in t}
    assert len(seconds) >= 2, seconds  # it counted down
    assert max(seconds) >= 3, seconds
