"""The web chat (and so the VS Code view, which shares it) shows a task: its card with the
child's final text and the child's session id, and a child's approval asked on that card.
Real Chromium (Playwright), real daemon, mock LLM; screenshots in test-artifacts/web/."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import scaled
from tests.subagents.scenarios import SUBAGENT_SCENARIOS
from tests.web.conftest import WebDaemon, sign_in_browser, web_daemon

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, BrowserContext, expect, sync_playwright  # noqa: E402

from tests.web.test_page import IDLE, open_page, send, shoot  # noqa: E402

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    with web_daemon(SUBAGENT_SCENARIOS) as daemon:
        yield daemon


@pytest.fixture
def context(browser: Browser, web: WebDaemon) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    context.set_default_timeout(scaled(20) * 1000)
    sign_in_browser(context, web)
    yield context
    context.close()


@pytest.fixture
def artifacts() -> Path:
    folder = Path(__file__).resolve().parents[2] / "test-artifacts" / "web"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_task_card_shows_the_childs_text_and_session(
    context: BrowserContext, web: WebDaemon, artifacts: Path
) -> None:
    page = open_page(context, web)
    send(page, "delegate the answer")
    page.wait_for_function(IDLE)
    card = page.locator(".item--tool")
    expect(card).to_have_count(1)
    expect(card.locator(".tool-name")).to_have_text("task")
    expect(card.locator(".tool-summary")).to_have_text("Find the answer (general)")
    expect(card.locator(".tool-output")).to_have_text("The answer is 42.")
    expect(card.locator(".tool-child")).to_contain_text("Subagent general · session ")
    child = card.locator(".tool-child").inner_text().split("session ")[1].split(" ")[0]
    listed = {s["sessionId"]: s for s in web.rpc("session/list", {})["sessions"]}
    assert listed[child]["parentSessionId"] in listed
    expect(page.locator(".item--assistant").last).to_have_text(
        "The subagent says the answer is 42."
    )
    # The sidebar lists the child's session indented right under its parent's.
    parent_row = page.locator(".session", has=page.get_by_text("delegate the answer", exact=True))
    expect(parent_row.locator("+ .session--child")).to_have_count(1)
    shoot(page, artifacts, "subagent-task")


def test_a_reopened_task_card_shows_the_childs_steps(
    context: BrowserContext, web: WebDaemon, artifacts: Path
) -> None:
    """The steps a task card drew live (the child's replies and calls) are drawn again when
    the chat is reloaded: they come from the child's session, not from live events."""
    page = open_page(context, web)
    send(page, "delegate a write")
    steps = page.locator(".item--tool .child-step")
    expect(steps).to_have_count(3)
    page.wait_for_function(IDLE)
    live = steps.all_inner_texts()
    assert live[0] == "Writing."
    assert "write" in live[1]
    page.reload()
    page.wait_for_function(IDLE)
    expect(page.locator(".item--tool .tool-output")).to_have_text("Wrote child.txt.")
    expect(steps).to_have_count(3)
    expect(steps).to_have_text(live, use_inner_text=True)  # retried: laid out once shown
    expect(page.locator(".child-step--done")).to_have_count(1)
    shoot(page, artifacts, "subagent-task-reopened")


def test_a_childs_approval_is_asked_on_the_task_card(
    context: BrowserContext, web: WebDaemon, artifacts: Path
) -> None:
    session_id = web.new_session(permissionMode="ask")
    page = open_page(context, web, session_id)
    send(page, "delegate a write")
    asking = page.locator(".tool--asking")
    expect(asking).to_have_count(1)
    expect(asking.locator(".tool-head .tool-name")).to_have_text("task")
    expect(asking.get_by_role("group")).to_have_attribute(
        "aria-label", "Approve the subagent's write?"
    )
    shoot(page, artifacts, "subagent-approval")
    asking.get_by_role("button", name="Allow", exact=True).click()
    page.wait_for_function(IDLE)
    card = page.locator(".item--tool")
    expect(card.locator(".tool-output")).to_have_text("Wrote child.txt.")
    assert (web.home.project / "child.txt").read_text() == "hi\n"
