"""The problems an edit introduced, under its card in the VS Code chat webview (the built bundle
in headless Chromium), fed a run recorded from the real daemon with the real pylsp: the mock
LLM's edit calls an undefined name and pyflakes reports it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.harness import Home, new_session, run, stdio_client
from tests.langserver.conftest import SCENARIOS, make_project, pylsp_table
from tests.vscode.test_webview import ARTIFACTS, harness_url, page  # noqa: F401
from tests.vscode.webview_harness import as_session


@pytest.fixture
def home() -> Iterator[Home]:
    with Home() as box:
        make_project(box.project)
        box.use_scenarios(SCENARIOS)
        box.user_config(pylsp_table())
        yield box


async def _record(home: Home, prompt: str) -> list[dict[str, Any]]:
    """The session/event params of one run of ``prompt`` on the real daemon."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, prompt, timeout=90)
        assert result["stopReason"] == "end_turn"
    return events


def test_the_edit_card_lists_its_new_problems(page: Any, home: Home) -> None:  # noqa: F811
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
        recorded = pool.submit(asyncio.run, _record(home, "lsp-break")).result()
    events = as_session(recorded)
    page.evaluate("(events) => feed(events)", events)
    page.get_by_text("lsp-break done").wait_for()
    card = page.locator("article.item--tool", has_text="edit").first
    assert "undefined_x" in card.locator(".tool-diff").inner_text()
    problems = card.locator(".tool-problems")
    problems.wait_for()
    text = problems.inner_text()
    assert "1 new problem the language server reports" in text
    assert "main.py:5:19 undefined name 'undefined_x' (pyflakes)" in text
    assert problems.locator(".tool-problem--error").count() == 1
    card.screenshot(path=str(ARTIFACTS / "webview-edit-problems.png"))
