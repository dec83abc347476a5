"""An MCP server's form (``elicitation/create`` from :mod:`tests.mcp.eliciting_server`,
written with the official SDK) in the chat page (real Chromium, real daemon): the same question
card as ``ask_user``'s, on the MCP tool's card, answered there (typed fields, one choice,
Yes / No); the form's content is the tool's result, and a reload shows the card settled, from
the session's history. Screenshots in ``test-artifacts/web/``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import scaled
from tests.mcp.conftest import mcp_call
from tests.mcp.test_elicitation_e2e import SERVER
from tests.web.conftest import WebDaemon, web_daemon
from tests.web.test_page import IDLE, open_page, send, shoot

pytest.importorskip("playwright")
from playwright.sync_api import BrowserContext, expect

from tests.web.test_page import browser, context  # noqa: F401  (fixtures)


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    """A web daemon whose user configuration names the eliciting MCP server ``e``."""
    scenario = mcp_call("elicit-book", "mcp__e__book_table", {"restaurant": "Chez"})
    config = f'[mcp_servers.e]\ncommand = "{sys.executable}"\nargs = ["{SERVER}"]\n'
    with web_daemon([scenario], config) as daemon:
        yield daemon


def test_an_mcp_servers_form_is_a_card_settled_after_a_reload(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    page = open_page(context, web)
    send(page, "elicit-book")
    form = page.locator(".tool--asking .ask-form")
    expect(form).to_be_visible(timeout=scaled(60) * 1000)  # the run starts the server first
    expect(form.locator(".ask-header")).to_have_text(["Date", "Party", "Seating", "Vegan"])
    shoot(page, artifacts, "question-mcp-form")
    form.locator(".ask-other").nth(0).fill("2026-12-24")
    form.locator(".ask-other").nth(1).fill("4")
    form.get_by_role("button", name="terrace").click()
    form.get_by_role("button", name="Yes").click()
    form.get_by_role("button", name="Answer").click()
    page.wait_for_function(IDLE)
    card = page.locator(".item--tool", has_text="book_table")
    settled = "Date: 2026-12-24 · Party: 4 · Seating: terrace · Vegan: Yes"
    expect(card.locator(".ask-settled")).to_have_text(settled)
    expect(card.locator(".tool-output")).to_contain_text('"seating": "terrace"')
    page.reload()
    expect(card.locator(".ask-settled")).to_have_text(settled)
    expect(card.locator(".tool-output")).to_contain_text('"party": 4')
    shoot(page, artifacts, "question-mcp-reloaded")
