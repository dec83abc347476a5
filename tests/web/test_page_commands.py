"""Slash commands in the chat page (real Chromium against a real daemon): the `/` menu lists
the page's own commands and the project's and user's custom commands, filters as you type and
is driven by the keyboard; a custom command runs its expansion and shows what was typed;
``/clear`` is a command, not a prompt; an unknown name is an error naming the known ones.
Screenshots at 1280 and 390 px go to ``test-artifacts/web/``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.harness import scaled
from tests.web.conftest import WebDaemon
from tests.web.test_page import CHROMIUM, IDLE, open_page, sign_in_browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def commands(web: WebDaemon) -> Path:
    project = web.home.project / ".agentd" / "commands"
    project.mkdir(parents=True)
    (project / "review.md").write_text(
        "---\ndescription: Review a file for bugs\nargument-hint: FILE [FOCUS]\n---\n"
        "Review $1 for bugs, focusing on $2."
    )
    (project / "release-notes.md").write_text("Write the release notes for the last tag.")
    user = web.home.config_dir / "agentd" / "commands"
    user.mkdir(parents=True)
    (user / "standup.md").write_text("---\ndescription: Summarise yesterday\n---\nSummarise.")
    (user / "clear.md").write_text("A user command hidden by the page's /clear.")
    web.home.trust()  # the project's commands are pinned with the folder
    return project


def context_at(browser: Browser, web: WebDaemon, width: int) -> BrowserContext:
    context = browser.new_context(viewport={"width": width, "height": 760})
    context.set_default_timeout(scaled(20) * 1000)
    sign_in_browser(context, web)
    return context


def menu_names(page: Page) -> list[str]:
    return page.locator(".slash-menu .slash-name").all_inner_texts()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_slash_menu_lists_filters_and_picks(
    browser: Browser, web: WebDaemon, commands: Path, artifacts: Path, width: int
) -> None:
    context = context_at(browser, web, width)
    page = open_page(context, web)
    box = page.get_by_role("textbox", name="Message")
    box.press_sequentially("/")
    menu = page.get_by_role("listbox", name="Commands")
    expect(menu).to_be_visible()
    expect(menu.locator(".slash-name")).to_have_count(8)  # the custom ones arrive after load
    names = menu_names(page)
    assert names[:5] == ["/clear", "/fork", "/compact", "/model", "/help"]
    assert names[5:] == ["/release-notes", "/review", "/standup"]  # the user's /clear: hidden
    review = menu.locator(".slash-item", has_text="/review")
    expect(review).to_contain_text("Review a file for bugs")
    expect(review.locator(".slash-hint")).to_be_visible(visible=width > 640)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.screenshot(path=str(artifacts / f"slash-menu-{width}-{scheme}.png"))

    box.press_sequentially("re")
    expect(menu.locator(".slash-name")).to_have_text(["/release-notes", "/review"])
    box.press("ArrowDown")
    expect(menu.locator(".slash-item--active")).to_contain_text("/review")
    box.press("Tab")
    expect(box).to_have_value("/review ")
    expect(menu).to_be_hidden()
    box.press_sequentially('src/a.py "race conditions"')
    box.press("Enter")
    expect(page.locator(".item--assistant")).to_have_count(1)
    page.wait_for_function(IDLE)
    user = page.locator(".item--user").last
    expect(user.locator(".user-command")).to_have_text('/review src/a.py "race conditions"')
    user.locator("summary").click()
    expect(user.locator(".user-expansion-text")).to_have_text(
        "Review src/a.py for bugs, focusing on race conditions."
    )
    if width > 640:  # the session list is titled by what was typed
        expect(page.locator(".session-title").first).to_have_text(
            '/review src/a.py "race conditions"'
        )
    page.screenshot(path=str(artifacts / f"slash-run-{width}.png"))

    box.press_sequentially("/")
    box.press("Escape")
    expect(menu).to_be_hidden()
    context.close()


def test_clear_is_a_command_and_unknown_names_are_errors(
    browser: Browser, web: WebDaemon, commands: Path, artifacts: Path
) -> None:
    context = context_at(browser, web, 1280)
    page = open_page(context, web)
    box = page.get_by_role("textbox", name="Message")
    box.fill("hello")
    box.press("Enter")
    expect(page.locator(".item--assistant")).to_have_count(1)
    page.wait_for_function(IDLE)
    first = page.url.split("#session=")[1]

    box.fill("/reveiw a.py")
    box.press("Enter")
    banner = page.get_by_role("alert").filter(has_text="unknown command")
    expect(banner).to_contain_text("unknown command /reveiw")
    expect(banner).to_contain_text("/review")
    expect(box).to_have_value("/reveiw a.py")  # the draft is kept to be corrected
    page.screenshot(path=str(artifacts / "slash-unknown-1280.png"))

    box.fill("/clear")
    expect(page.get_by_role("listbox", name="Commands")).to_be_visible()
    box.press("Enter")  # the menu shows /clear; Enter on the whole name runs it
    expect(page.locator(".chat-title")).to_have_text("New chat")
    expect(page.locator(".item--user")).to_have_count(0)
    stored = next(web.home.sessions.rglob(f"*{first}.jsonl")).read_text()
    users = [json.loads(line) for line in stored.splitlines() if '"role":"user"' in line]
    assert [u["message"]["content"][0]["text"] for u in users] == ["hello"]  # never prompts

    box.fill("/help")
    box.press("Enter")
    expect(page.get_by_role("listbox", name="Commands")).to_be_visible()
    expect(box).to_have_value("/")
    context.close()
