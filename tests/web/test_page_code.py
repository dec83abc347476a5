"""Code blocks and long pastes in the real page at 1280 and 390 px: a fenced block with a
language is highlighted (by the vendored highlight.js, in a worker) and has a working copy
button; one without a language stays plain but can be copied; a 5 MB prompt is shown folded with
"Show more", which unfolds and folds it again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from tests.harness import scaled
from tests.web.chat_page import IDLE, browser, new_context, open_page, send, shoot, width
from tests.web.conftest import WebDaemon, web_daemon

__all__ = ["browser", "width"]  # fixtures

PYTHON = 'def greet(name: str) -> str:\n    """Say hello."""\n    return f"Hello, {name}!"  # 42'
REPLY = f"Here:\n\n```python\n{PYTHON}\n```\n\nAnd a log:\n\n```\nplain <b>text</b> line\n```\n"
LONG = "\n".join(f"value_{n} = compute({n}, 'text')  # step {n}" for n in range(1, 501))
LONG_REPLY = f"A long one:\n\n```python\n{LONG}\n```\n\nThe end."
SCENARIOS = [
    {"name": "code", "trigger": "show code", "steps": [{"response": {"content": REPLY}}]},
    {"name": "long", "trigger": "long code", "steps": [{"response": {"content": LONG_REPLY}}]},
]


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    with web_daemon(SCENARIOS) as daemon:
        yield daemon


@pytest.fixture
def context(browser: Browser, web: WebDaemon, width: str) -> Iterator[BrowserContext]:
    context = new_context(browser, web, width)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=web.base)
    yield context
    context.close()


def test_code_blocks_are_highlighted_and_copied(
    context: BrowserContext, web: WebDaemon, width: str, artifacts: Path
) -> None:
    page = open_page(context, web)
    send(page, "show code")
    page.wait_for_function(IDLE)
    blocks = page.locator(".code-block")
    expect(blocks).to_have_count(2)
    python = blocks.nth(0).locator("code")
    expect(python).to_have_class("language-python hljs")
    expect(python.locator(".hljs-keyword").first).to_have_text("def")
    expect(python.locator(".hljs-string").first).to_contain_text("Say hello.")
    expect(python.locator(".hljs-comment")).to_have_text("# 42")
    expect(python).to_have_text(PYTHON)  # the text itself is unchanged
    keyword = python.locator(".hljs-keyword").first.evaluate("(n) => getComputedStyle(n).color")
    plain = python.evaluate("(n) => getComputedStyle(n).color")
    assert keyword != plain
    plain_block = blocks.nth(1).locator("code")
    expect(plain_block).to_have_text("plain <b>text</b> line")  # no language: left as text
    assert plain_block.locator("span").count() == 0
    shoot(page, artifacts, f"code-{width}")

    blocks.nth(0).get_by_role("button", name="Copy the code").click()
    expect(blocks.nth(0).get_by_role("button", name="Copy the code")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == PYTHON
    blocks.nth(1).get_by_role("button", name="Copy the code").click()
    expect(blocks.nth(1).get_by_role("button", name="Copy the code")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "plain <b>text</b> line"


def test_a_5_mb_prompt_is_folded_with_show_more(
    context: BrowserContext, web: WebDaemon, width: str, artifacts: Path
) -> None:
    page = open_page(context, web)
    paste = "".join(f"line {i:06d} of a long log pasted into the chat\n" for i in range(110_000))
    assert len(paste) > 5_000_000
    page.get_by_role("textbox", name="Message").evaluate(
        "(box, text) => { box.value = text; }", paste
    )
    page.get_by_role("textbox", name="Message").press("Enter")
    user = page.locator(".item--user")
    toggle = user.get_by_role("button", name="Show more")
    # 5 MB go to the daemon, into the session file and back as the user's message before the
    # page folds them: on a loaded machine that takes longer than a page assertion's default
    expect(toggle).to_contain_text("5.2 MB", timeout=scaled(60) * 1000)
    expect(toggle).to_contain_text("109,980 more lines")  # 110,000 lines, 20 shown
    page.wait_for_function(IDLE)
    box = user.bounding_box()
    assert box
    assert box["height"] < 1_200, box  # folded: a screenful at most
    assert len(user.inner_text()) < 5_000
    shoot(page, artifacts, f"long-paste-{width}")
    toggle.click()
    expect(user.get_by_role("button", name="Show less")).to_be_visible()
    assert user.evaluate("(n) => n.textContent.length") > 5_000_000
    user.get_by_role("button", name="Show less").click()
    expect(user.get_by_role("button", name="Show more")).to_be_visible()
    assert user.evaluate("(n) => n.textContent.length") < 5_000


def test_a_long_block_gets_its_highlighting_where_it_is_scrolled_to(
    context: BrowserContext, web: WebDaemon, width: str, artifacts: Path
) -> None:
    """500 lines: runs of 100 lines get their markup near the screen only; the text is whole."""
    page = open_page(context, web)
    send(page, "long code")
    page.wait_for_function(IDLE)
    code = page.locator(".code-block code")
    expect(code).to_have_class("language-python hljs")
    runs = code.locator(".code-run")
    expect(runs).to_have_count(5)
    code.evaluate("(n) => n.closest('.code-block').scrollIntoView({block: 'start'})")
    expect(runs.nth(0).locator(".hljs-string").first).to_have_text("'text'")
    assert runs.nth(3).locator("span").count() == 0  # far from the screen: plain text
    runs.nth(4).scroll_into_view_if_needed()
    expect(runs.nth(4).locator(".hljs-comment").last).to_have_text("# step 500")
    assert code.evaluate("(n) => n.textContent") == LONG + "\n"
    blocks = page.locator(".code-block")
    blocks.get_by_role("button", name="Copy the code").click()
    assert page.evaluate("navigator.clipboard.readText()") == LONG
    shoot(page, artifacts, f"long-code-{width}")
