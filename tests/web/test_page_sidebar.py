"""The session list in the real page at 1280 and 390 px: sessions grouped by project (the
folder's name, its full path on hover), titled by their first prompt (a 1 MB one piped in
too), filtered by a search box; at 390 px a menu button opens it as a drawer, the title and
model stay readable and every control is a thumb-sized target (≥ 44 px)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, expect

from tests.harness import Home
from tests.web.chat_page import browser, new_context, open_page, shoot, width
from tests.web.conftest import WebDaemon

__all__ = ["browser", "width"]  # fixtures

PIPED_TITLE = re.compile(r"^log line 0: something happened log line 1: .{10,}…$")
PIPED = "".join(f"log line {n}: something happened\n" for n in range(30_000))  # ~1 MB


@pytest.fixture(scope="module")
def web() -> Iterator[WebDaemon]:
    """One daemon with sessions in two projects (made once: the tests only read them)."""
    home = Home()
    daemon = WebDaemon(home)
    other = home.root / "other-project"
    other.mkdir()
    try:
        first = daemon.new_session()
        daemon.rpc(
            "session/prompt", {"sessionId": first, "text": "how are you, and fix the parser"}
        )
        second = daemon.new_session()
        daemon.rpc("session/prompt", {"sessionId": second, "text": "hello world"})
        piped = daemon.rpc("session/new", {"cwd": str(other), "provider": "mock"})["sessionId"]
        daemon.rpc("session/prompt", {"sessionId": piped, "text": PIPED})
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


@pytest.fixture
def context(browser: Browser, web: WebDaemon, width: str) -> Iterator[BrowserContext]:
    context = new_context(browser, web, width)
    yield context
    context.close()


def thumb_sized(target: Locator) -> None:
    box = target.bounding_box()
    assert box, target
    assert box["width"] >= 44, (target, box)
    assert box["height"] >= 44, (target, box)


def open_list(page, width: str) -> Locator:
    """The session list, shown (through the menu button at the phone width)."""
    nav = page.get_by_role("navigation", name="Sessions")
    menu = page.get_by_role("button", name="Sessions")
    if width == "phone":
        expect(nav).not_to_be_in_viewport()
        thumb_sized(menu)
        menu.click()
        expect(menu).to_have_attribute("aria-expanded", "true")
    else:
        expect(menu).to_be_hidden()
    expect(nav).to_be_in_viewport(ratio=0.9)
    return nav


def test_sessions_are_grouped_by_project_titled_and_filtered(
    context: BrowserContext, web: WebDaemon, width: str, artifacts: Path
) -> None:
    page = open_page(context, web)
    nav = open_list(page, width)
    groups = nav.locator(".session-group")
    expect(groups).to_have_count(2)
    other = groups.filter(has=page.locator("h2", has_text="other-project"))
    expect(other.locator("h2")).to_have_attribute("title", str(web.home.root / "other-project"))
    expect(other.locator(".session-title")).to_have_text(PIPED_TITLE)
    project = groups.filter(has=page.get_by_role("heading", name="proj", exact=True))
    expect(project.locator("h2")).to_have_attribute("title", str(web.home.project))
    expect(project.locator(".session-title")).to_have_text(
        ["hello world", "how are you, and fix the parser"]
    )
    shoot(page, artifacts, f"sidebar-{width}")

    search = nav.get_by_role("searchbox", name="Filter sessions")
    search.fill("PARSER")
    expect(nav.locator(".session-title")).to_have_text(["how are you, and fix the parser"])
    search.fill("other-proj")
    expect(nav.locator(".session-group h2")).to_have_text(["other-project"])
    search.fill("nothing like this")
    expect(nav.get_by_text("No session matches.")).to_be_visible()
    search.fill("")
    expect(nav.locator(".session")).to_have_count(3)


def test_a_chosen_session_opens_and_the_header_stays_readable(
    context: BrowserContext, web: WebDaemon, width: str, artifacts: Path
) -> None:
    page = open_page(context, web)
    nav = open_list(page, width)
    nav.locator(".session-open", has_text="how are you, and fix the parser").click()
    title = page.get_by_role("heading", level=1)
    expect(title).to_have_text("how are you, and fix the parser")
    if width == "phone":
        expect(nav).not_to_be_in_viewport()  # the choice closed the drawer
        expect(page.get_by_role("button", name="Sessions")).to_have_attribute(
            "aria-expanded", "false"
        )
    cut = title.evaluate(
        "(n) => n.scrollWidth > n.clientWidth + 1 || n.scrollHeight > n.clientHeight + 1"
    )
    assert not cut  # the whole title shows
    picker = page.get_by_role("combobox", name="Model")
    expect(picker).to_have_value("mock/mock-model")
    expect(picker).to_be_in_viewport()
    shown = picker.evaluate(
        "(n) => n.clientWidth >= n.scrollWidth && n.getBoundingClientRect().width >= 150"
    )
    assert shown  # the model's name is not cut
    if width == "phone":
        for target in (
            picker,
            page.get_by_role("button", name="Send"),
            page.get_by_role("textbox", name="Message"),
        ):
            thumb_sized(target)
        page.get_by_role("button", name="Sessions").click()
        for row in nav.locator(".session-open").all():
            thumb_sized(row)
        page.locator(".drawer-backdrop").click(position={"x": 370, "y": 400})
        expect(nav).not_to_be_in_viewport()
    shoot(page, artifacts, f"header-{width}")
