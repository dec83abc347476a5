"""A provider-side web search in the chat page (real Chromium, a real daemon whose Anthropic
provider talks to the mock LLM over real HTTP): each search is a finished ``web_search`` card
with its results, the reply's cited pages are listed under it as sources, and a reload (the
stored messages) shows the same cards and sources once (screenshot in the artifacts folder)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import BUILT_IN, parse_scenarios
from tests.documents.test_provider_search_e2e import CONFIG, DOCS, SCENARIO
from tests.harness import Home, scaled
from tests.web.conftest import WebDaemon

pytest.importorskip("playwright")
from playwright.sync_api import Browser, expect

from tests.web.chat_page import IDLE, browser, open_page, send  # noqa: F401  (fixture)
from tests.web.conftest import sign_in_browser


@pytest.fixture
def llm() -> Iterator[MockLLMServer]:
    """The mock LLM on its own loop in a thread (the page test is synchronous)."""
    builtin = json.loads(BUILT_IN.read_text())
    server = MockLLMServer(parse_scenarios({**builtin, "scenarios": [SCENARIO]}))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(scaled(30))
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(scaled(30))
        loop.call_soon_threadsafe(loop.stop)
        thread.join(scaled(10))
        loop.close()


@pytest.fixture
def search_web(llm: MockLLMServer) -> Iterator[WebDaemon]:
    home = Home()
    home.user_config(CONFIG.format(api="anthropic", url=llm.url))
    daemon = WebDaemon(home)
    try:
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


def test_searches_are_cards_and_the_cited_pages_are_sources(
    browser: Browser,  # noqa: F811
    search_web: WebDaemon,
    artifacts: Path,
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(scaled(20) * 1000)
    sign_in_browser(context, search_web)
    session = search_web.new_session(provider="p")
    page = open_page(context, search_web, session)
    send(page, "what is new in python 3.13?")
    page.wait_for_function(IDLE)
    for shown in (page, open_page(context, search_web, session)):  # live, then from history
        cards = shown.locator("article.item--tool", has_text="web_search")
        expect(cards).to_have_count(2)
        expect(cards.first).to_contain_text("python 3.13 what's new")
        sources = shown.get_by_label("Sources")
        expect(sources).to_have_count(1)
        expect(sources.get_by_role("link")).to_have_attribute("href", DOCS)
        expect(sources.get_by_role("link")).to_have_text("What's New")
        shown.screenshot(path=str(artifacts / "provider-search.png"))
    context.close()
