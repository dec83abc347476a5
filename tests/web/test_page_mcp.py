"""MCP tool calls in the chat page (real Chromium, a real daemon running the test MCP
server, :mod:`tests.mcp.server`): a card names the server and the tool (server ``t``, an
angle quote, tool ``add``; the full ``mcp__t__add`` in its tooltip) and shows every
argument, in a finished card and in an approval. Screenshots:
``test-artifacts/web/mcp-card-*.png``, ``mcp-approval-*.png``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import scaled
from tests.mcp.conftest import SCENARIOS, server_table
from tests.web.conftest import WebDaemon, web_daemon
from tests.web.test_page import IDLE, open_page, send, shoot

pytest.importorskip("playwright")
from playwright.sync_api import BrowserContext, expect

from tests.web.test_page import browser, context  # noqa: F401  (fixtures)

SERVER_START_MS = scaled(60) * 1000
"""How long the first card may take: the run starts the MCP server (a Python process importing
the SDK: seconds on a loaded machine) before the model is asked."""


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    """A web daemon whose user configuration names the test MCP server ``t``."""
    with web_daemon(SCENARIOS, server_table()) as daemon:
        yield daemon


def test_an_mcp_tool_card_names_the_server_and_the_tool(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    page = open_page(context, web)
    send(page, "mcp-add")
    card = page.locator(".item--tool")
    expect(card).to_have_count(1, timeout=SERVER_START_MS)
    page.wait_for_function(IDLE)
    name = card.locator(".tool-name")
    expect(name).to_have_text("t › add")
    expect(name.locator(".tool-server")).to_have_text("t")
    expect(name).to_have_attribute("title", "mcp__t__add: tool add of MCP server t")
    expect(card).to_have_attribute("aria-label", "Tool t › add")
    expect(card.locator(".tool-summary")).to_have_text('{"a":2,"b":3}')
    expect(card.locator(".tool-output")).to_have_text("5")
    expect(card.locator(".tool-status")).to_have_text("done")
    shoot(page, artifacts, "mcp-card")


def test_an_mcp_approval_shows_the_server_the_tool_and_the_arguments(
    context: BrowserContext,  # noqa: F811
    web: WebDaemon,
    artifacts: Path,
) -> None:
    session_id = web.new_session(permissionMode="ask")
    page = open_page(context, web, session_id)
    send(page, "mcp-add")
    asking = page.locator(".tool--asking")
    expect(asking).to_have_count(1, timeout=SERVER_START_MS)
    expect(asking.get_by_role("group")).to_have_attribute("aria-label", "Approve t › add?")
    expect(asking.locator(".tool-question")).to_have_text("Allow t › add?")
    expect(asking.locator(".tool-name")).to_have_text("t › add")
    expect(asking.locator(".tool-summary")).to_have_text('{"a":2,"b":3}')
    expect(asking.locator(".tool-status")).to_have_text("waiting for approval")
    shoot(page, artifacts, "mcp-approval")
    asking.get_by_role("button", name="Allow", exact=True).click()
    page.wait_for_function(IDLE)
    card = page.locator(".item--tool")
    expect(card.locator(".tool-output")).to_have_text("5")
    expect(card.locator(".tool-status")).to_have_text("done")
