"""Background processes in the chat page (real Chromium, real daemon, real processes): the
strip above the transcript shows each one's state and the tail of its output as it arrives,
is back after a reload (from ``session/state``), and its Kill button ends the process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_orphans import running
from tests.harness import scaled, wait_until
from tests.scenarios import tool_call
from tests.web.conftest import WebDaemon, sign_in_browser, web_daemon
from tests.web.test_page import IDLE, open_page, send, shoot

pytest.importorskip("playwright")
from playwright.sync_api import Browser, BrowserContext, expect

from tests.web.test_page import browser  # noqa: F401  (fixture)

NEEDLE = "tick-31337"
COMMAND = f"i=0; while true; do i=$((i+1)); echo {NEEDLE} $i; sleep 0.2; done"
SCENARIO = {
    "name": "ticker",
    "trigger": "start the ticker",
    "steps": [
        {
            "response": {
                "content": "Starting it.",
                "tool_calls": [
                    tool_call(
                        "bash", {"command": COMMAND, "background": True, "description": "ticker"}
                    )
                ],
            }
        },
        {"response": {"content": "It ticks in the background."}},
    ],
}


@pytest.fixture
def ticker_web() -> Iterator[WebDaemon]:
    with web_daemon([SCENARIO]) as daemon:
        yield daemon


@pytest.fixture
def page_context(browser: Browser, ticker_web: WebDaemon) -> Iterator[BrowserContext]:  # noqa: F811
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    context.set_default_timeout(scaled(20) * 1000)
    sign_in_browser(context, ticker_web)
    yield context
    context.close()


def test_the_strip_shows_tails_survives_a_reload_and_kills(
    page_context: BrowserContext, ticker_web: WebDaemon, artifacts: Path
) -> None:
    page = open_page(page_context, ticker_web)
    strip = page.get_by_role("region", name="Background processes")
    expect(strip).to_be_hidden()
    send(page, "start the ticker")
    page.wait_for_function(IDLE)
    expect(strip).to_be_visible()
    expect(strip.locator(".processes-head")).to_have_text("Background processes · 1 running")
    row = strip.locator(".process")
    expect(row.locator(".process-id")).to_have_text("p1")
    expect(row.locator(".process-state")).to_have_text("running")
    expect(row.locator(".process-command")).to_contain_text("(ticker)")
    expect(row.locator(".process-tail")).to_contain_text(f"{NEEDLE} 3")  # output keeps coming
    strip_box, log_box = strip.bounding_box(), page.locator(".log").bounding_box()
    assert strip_box is not None
    assert log_box is not None
    assert strip_box["y"] + strip_box["height"] <= log_box["y"] + 1
    shoot(page, artifacts, "processes-running")

    page.reload()
    page.wait_for_function("() => document.documentElement.dataset.ready === 'true'")
    expect(strip.locator(".process-state")).to_have_text("running")
    strip.get_by_role("button", name="Kill").click()
    expect(row.locator(".process-state")).to_have_text("killed (SIGTERM)")
    expect(strip.locator(".processes-head")).to_have_text("Background processes · 0 running")
    expect(strip.get_by_role("button", name="Kill")).to_have_count(0)
    shoot(page, artifacts, "processes-killed")
    state = ticker_web.rpc("session/processes", {})
    assert state["sessions"][0]["processes"][0]["state"] == "killed"
    wait_until(lambda: not running(f"echo {NEEDLE}"), 10)
