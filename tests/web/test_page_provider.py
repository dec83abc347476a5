"""A newcomer without a provider, in the real page at 1280 and 390 px: the page says how to
configure one (the exact lines), the model picker works on a new chat (the mock included), a
failed send keeps the draft and shows the daemon's error with its line breaks; and
``agentd serve --http --provider mock`` makes the mock the default."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from tests.harness import Home
from tests.web.chat_page import IDLE, browser, new_context, open_page, send, shoot, width
from tests.web.conftest import WebDaemon
from tests.web.test_page_images import PNG, give

__all__ = ["browser", "width"]  # fixtures
LINES_SHOWN = "(n) => n.getBoundingClientRect().height / parseFloat(getComputedStyle(n).lineHeight)"


@pytest.fixture
def bare() -> Iterator[WebDaemon]:
    """A web daemon with no provider configured anywhere."""
    home = Home()
    daemon = WebDaemon(home, config="")
    try:
        yield daemon
    finally:
        daemon.close()
        home.cleanup()


@pytest.fixture
def context(browser: Browser, bare: WebDaemon, width: str) -> Iterator[BrowserContext]:
    context = new_context(browser, bare, width)
    yield context
    context.close()


def test_no_provider_explains_and_keeps_the_draft_then_the_mock_works(
    context: BrowserContext, bare: WebDaemon, width: str, artifacts: Path
) -> None:
    page = open_page(context, bare)
    help_box = page.get_by_role("region", name="Configure a provider")
    expect(help_box).to_be_visible()
    expect(help_box).to_contain_text('provider = "local"')
    expect(help_box).to_contain_text("[providers.local]")
    expect(help_box).to_contain_text("agentd serve --http --provider mock")
    picker = page.get_by_role("combobox", name="Model")
    expect(picker).to_be_enabled()
    expect(picker.locator("option:checked")).to_have_text("Choose a model…")
    shoot(page, artifacts, f"provider-help-{width}")

    give(page, "paste", "shot.png", "image/png", PNG)
    send(page, "hello there, first message")
    banner = page.get_by_role("alert").filter(has_text="no LLM provider is configured")
    expect(banner).to_be_visible()
    text = banner.inner_text()
    assert "Any one of these works:" in text.split("\n")[1], text
    lines = banner.evaluate(LINES_SHOWN)
    assert lines >= 4, lines  # shown with its line breaks, not squashed into one paragraph
    expect(page.get_by_role("textbox", name="Message")).to_have_value("hello there, first message")
    expect(page.get_by_role("list", name="Attached images").locator("img")).to_have_count(1)
    shoot(page, artifacts, f"provider-error-{width}")

    picker.select_option("mock/mock-model")
    page.get_by_role("textbox", name="Message").press("Enter")
    expect(page.locator(".item--assistant").last).to_contain_text("I am the agentd mock model")
    page.wait_for_function(IDLE)
    expect(picker).to_have_value("mock/mock-model")
    expect(help_box).to_be_hidden()
    expect(page.locator(".item--user")).to_contain_text("hello there, first message")
    expect(page.locator(".item--user img.user-image")).to_have_count(1)
    sessions = bare.rpc("session/list", {})["sessions"]
    assert len(sessions) == 1
    state = bare.rpc("session/load", {"sessionId": sessions[0]["sessionId"]})["session"]
    assert (state["provider"], state["model"]) == ("mock", "mock-model")


def test_serve_provider_flag_makes_new_sessions_use_it() -> None:
    home = Home()
    daemon = WebDaemon(home, "--provider", "mock", config="")
    try:
        models = daemon.rpc("models/list", {"cwd": str(home.project)})
        assert (models["defaultProvider"], models.get("defaultModel")) == ("mock", None)
        info = daemon.rpc("session/new", {"cwd": str(home.project)})
        assert (info["provider"], info["model"]) == ("mock", "mock-model")
    finally:
        daemon.close()
        home.cleanup()


def test_serve_provider_flag_replaces_the_configured_provider_and_model() -> None:
    home = Home()
    config = 'provider = "openai"\nmodel = "gpt-4o"\n'
    daemon = WebDaemon(home, "--provider", "mock", "--model", "other-mock", config=config)
    try:
        info = daemon.rpc("session/new", {"cwd": str(home.project)})
        assert (info["provider"], info["model"]) == ("mock", "other-mock")
        named = daemon.rpc("session/new", {"cwd": str(home.project), "provider": "mock"})
        assert named["provider"] == "mock"
    finally:
        daemon.close()
        home.cleanup()
