"""The question card in the chat page (real Chromium, real daemon): the ``ask_user`` tool's
questions on its card, one choice as pressed buttons, several as checkboxes, a line for an
answer of one's own; the answers are the tool's result; a reload mid-question shows the card
again and it still answers, a reload after it shows the card settled. Screenshots in
``test-artifacts/web/``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_questions import ASK
from tests.web.conftest import WebDaemon, web_daemon
from tests.web.test_page import IDLE, open_page, send, shoot

pytest.importorskip("playwright")
from playwright.sync_api import BrowserContext, Page, expect

from tests.web.test_page import browser, context  # noqa: F401  (fixtures)


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    """The web daemon whose mock LLM asks (the ``context`` fixture signs in to it)."""
    with web_daemon([ASK]) as daemon:
        yield daemon


def _answer(page: Page) -> None:
    form = page.locator(".ask-form")
    form.get_by_role("button", name="SQLite").click()
    form.get_by_label("Auth").check()
    form.get_by_label("Export").check()
    form.get_by_role("button", name="Answer").click()


def test_the_card_answers_a_single_and_a_multi_select_question(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    page = open_page(context, web)
    send(page, "ask me about the plan")
    form = page.locator(".tool--asking .ask-form")
    expect(form).to_be_visible()
    expect(form.locator(".ask-header")).to_have_text(["Database", "Features"])
    expect(form.get_by_role("button", name="Answer")).to_be_disabled()
    shoot(page, artifacts, "question-card")
    _answer(page)
    page.wait_for_function(IDLE)
    card = page.locator(".item--tool", has_text="ask_user")
    expect(card.locator(".ask-settled")).to_have_text("Database: SQLite · Features: Auth, Export")
    expect(card.locator(".tool-output")).to_contain_text("= Auth, Export")
    shoot(page, artifacts, "question-answered")
    page.reload()  # the chat again, from the session's history: the card settled as it was
    expect(card.locator(".ask-settled")).to_have_text("Database: SQLite · Features: Auth, Export")


def test_a_reload_mid_question_shows_the_card_again(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    page = open_page(context, web)
    send(page, "ask me about the plan")
    expect(page.locator(".tool--asking .ask-form")).to_be_visible()
    page.reload()
    form = page.locator(".tool--asking .ask-form")
    expect(form).to_be_visible()
    form.locator(".ask-other").first.fill("DuckDB")
    page.locator(".ask-form").get_by_label("Search").check()
    page.locator(".ask-form").get_by_role("button", name="Answer").click()
    page.wait_for_function(IDLE)
    card = page.locator(".item--tool", has_text="ask_user")
    expect(card.locator(".tool-output")).to_contain_text("= Other: DuckDB")
    shoot(page, artifacts, "question-after-reload")
