"""The question card in the VS Code chat webview (headless Chromium, Playwright), fed the
events of a real run that asks (``ask_user``, the real daemon and mock LLM): the extension's
``session/askQuestion`` arrives over postMessage, the card shows it, and the answer goes back
as the request's response. Screenshots in ``editors/vscode/test-results/``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_questions import ASK
from tests.harness import BUILTIN_SCENARIOS, scaled
from tests.vscode.codeserver import EXTENSION, chromium
from tests.vscode.conftest import build_extension
from tests.vscode.webview_harness import as_session, record, serve_harness

ARTIFACTS = EXTENSION / "test-results"


@pytest.fixture(scope="module")
def harness_url() -> Iterator[str]:
    if chromium() is None:
        pytest.skip("no chromium on PATH (apt install chromium)")
    build_extension()
    with serve_harness() as url:
        yield url


@pytest.fixture
def page(harness_url: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 420, "height": 900})
        tab.set_default_timeout(scaled(30) * 1000)
        tab.goto(harness_url)
        tab.wait_for_selector("html[data-ready='true']")
        yield tab
        browser.close()


def test_a_question_is_answered_in_the_card(page: Any, tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios.json"
    builtin = json.loads(BUILTIN_SCENARIOS.read_text())
    scenarios.write_text(json.dumps({**builtin, "scenarios": [ASK, *builtin["scenarios"]]}))
    events = as_session(record("ask me about the plan", tmp_path / "ask.jsonl", "auto", scenarios))
    at = next(i for i, e in enumerate(events) if e["event"]["type"] == "question_request")
    request = events[at]["event"]
    page.evaluate("(events) => feed(events)", events[: at + 1])
    params = {"sessionId": "S", **{k: v for k, v in request.items() if k != "type"}}
    page.evaluate(
        "(params) => window.postMessage({type: 'serverRequest', id: 11, method: "
        "'session/askQuestion', params}, '*')",
        params,
    )
    card = page.locator("article.item--tool.tool--asking .ask-form")
    card.wait_for()
    page.screenshot(path=str(ARTIFACTS / "webview-question.png"))
    card.get_by_role("button", name="Postgres").click()
    card.get_by_label("Search").check()
    card.locator(".ask-other").nth(1).fill("Export later")
    card.get_by_role("button", name="Answer").click()
    page.wait_for_function("window.posted.some((m) => m.type === 'serverResponse')")
    answers = page.evaluate("window.posted.filter((m) => m.type === 'serverResponse')")
    assert answers == [
        {
            "type": "serverResponse",
            "id": 11,
            "result": {
                "answers": [
                    {"selected": ["Postgres"], "other": None},
                    {"selected": ["Search"], "other": "Export later"},
                ]
            },
        }
    ]
