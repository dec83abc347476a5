"""The problems an edit introduced, listed under its card in the chat page (real Chromium, a
real daemon, the real pylsp): the mock LLM's edit calls an undefined name, pyflakes reports it,
and the card shows the problem under the diff; the edit that fixes it shows none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import Home
from tests.langserver.conftest import SCENARIOS, make_project, pylsp_table
from tests.web.conftest import WebDaemon
from tests.web.test_page import IDLE, open_page, send, shoot

pytest.importorskip("playwright")
from playwright.sync_api import BrowserContext, expect

from tests.web.test_page import browser, context  # noqa: F401  (fixtures)


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    """A web daemon whose project is the Python fixture and whose Python server is pylsp."""
    home = Home()
    make_project(home.project)
    home.use_scenarios(SCENARIOS)
    home.user_config(pylsp_table())
    daemon = WebDaemon(home)
    try:
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


def test_the_card_lists_the_problems_an_edit_introduced(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    page = open_page(context, web)
    send(page, "lsp-break")
    page.wait_for_function(IDLE)
    card = page.locator(".item--tool").last
    expect(card.locator(".tool-diff")).to_contain_text("undefined_x")
    problems = card.locator(".tool-problems")
    expect(problems).to_be_visible()
    expect(problems.locator(".tool-problems-head")).to_contain_text("new problem")
    row = problems.locator(".tool-problem--error").first
    expect(row).to_contain_text("main.py:5:19")
    expect(row).to_contain_text("undefined name 'undefined_x'")
    expect(row.locator(".tool-problem-mark")).to_have_attribute("aria-label", "error")
    card.scroll_into_view_if_needed()
    shoot(page, artifacts, "edit-problems")

    send(page, "lsp-fix")
    page.wait_for_function(IDLE)
    fixed = page.locator(".item--tool").last
    expect(fixed.locator(".tool-diff")).to_contain_text("helper(2)")
    expect(fixed.locator(".tool-problems")).to_be_hidden()
