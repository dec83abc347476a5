"""The chat webview bundle in headless Chromium (Playwright, system Chromium), fed event streams
recorded from the real daemon; the VS Code-only parts (Open diff, file links, approvals over
postMessage) are checked on the messages the webview posts. Screenshots go to
``editors/vscode/test-results/``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import scaled
from tests.vscode.codeserver import EXTENSION, chromium
from tests.vscode.conftest import build_extension
from tests.vscode.model_html import ATTACK_PROMPT, BEACON, COVERED_JS, FINDINGS_JS, write_scenarios
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
        tab.set_default_timeout(scaled(30) * 1000)  # a loaded machine
        tab.goto(harness_url)
        tab.wait_for_selector("html[data-ready='true']")
        yield tab
        browser.close()


def posted(page: Any, kind: str) -> list[dict[str, Any]]:
    return list(page.evaluate(f"window.posted.filter((m) => m.type === '{kind}')"))


def test_a_recorded_run_renders_text_tool_cards_and_links(page: Any, tmp_path: Path) -> None:
    events = as_session(record("hello world", tmp_path / "run.jsonl"))
    page.evaluate("(events) => feed(events)", events)
    page.get_by_text("Done! hello.py prints").wait_for()
    assert page.locator(".item--user").first.inner_text() == "hello world"
    write = page.locator("article.item--tool", has_text="write").first
    assert write.locator(".tool-status").inner_text() == "done"
    assert "+print('Hello, World!')" in write.locator(".tool-diff").inner_text()
    bash = page.locator("article.item--tool", has_text="bash").first
    assert bash.locator(".tool-status").inner_text() == "exit 0"
    assert bash.locator(".tool-output").inner_text().strip() == "Hello, World!"
    assert "in" in page.locator("footer.cost").inner_text()
    page.screenshot(path=str(ARTIFACTS / "webview-run.png"))

    write.locator("button.open-diff").click()
    (diff,) = posted(page, "openDiff")
    assert diff["toolCallId"] == "call_hello_1"
    assert diff["path"].endswith("/hello.py")
    assert diff["diff"].startswith("--- /dev/null")
    write.locator("button.tool-location").click()
    (location,) = posted(page, "openLocation")
    assert location["path"].endswith("/hello.py")


def test_an_approval_is_answered_in_the_card(page: Any, tmp_path: Path) -> None:
    events = as_session(record("hello world", tmp_path / "ask.jsonl", mode="ask"))
    ask_at = next(i for i, e in enumerate(events) if e["event"]["type"] == "permission_request")
    request = events[ask_at]["event"]
    page.evaluate("(events) => feed(events)", events[: ask_at + 1])
    params = {"sessionId": "S", "toolCallId": request["toolCallId"], "tool": request["tool"]}
    params |= {"args": request["args"], "options": request.get("options") or ["allow_once"]}
    page.evaluate("(params) => ask(7, params)", params)
    card = page.locator("article.item--tool.tool--asking").first
    card.wait_for()
    page.screenshot(path=str(ARTIFACTS / "webview-approval.png"))
    card.locator("button[data-option='allow_once']").click()
    page.wait_for_function("window.posted.some((m) => m.type === 'serverResponse')")
    (answer,) = posted(page, "serverResponse")
    assert answer == {"type": "serverResponse", "id": 7, "result": {"outcome": "allow_once"}}
    resolved = next(i for i, e in enumerate(events) if e["event"]["type"] == "permission_resolved")
    page.evaluate("(events) => feed(events)", events[ask_at + 1 : resolved + 1])
    page.locator("article.item--tool.tool--asking").wait_for(state="detached")
    assert page.locator(".tool-permission:visible").count() == 0


def test_reading_and_searching_cards_start_collapsed(page: Any, tmp_path: Path) -> None:
    events = as_session(record("parallel tools", tmp_path / "par.jsonl"))
    page.evaluate("(events) => feed(events)", events)
    listing = page.locator("article.item--tool", has_text="ls").first
    listing.locator(".tool-status", has_text="done").wait_for()
    assert listing.get_attribute("data-collapsed") == "true"
    assert not listing.locator(".tool-output").is_visible()
    listing.locator(".tool-head").click()
    assert listing.locator(".tool-output").is_visible()
    bash = page.locator("article.item--tool", has_text="bash").first
    assert bash.get_attribute("data-collapsed") is None
    assert bash.locator(".tool-output").is_visible()


def test_model_html_cannot_cover_or_fake_the_approval_buttons(page: Any, tmp_path: Path) -> None:
    """A reply with position:fixed boxes, the page's own classes and ids, a fake Allow button
    and an image beacon, then an approval: the reply keeps none of it and the real Allow button
    is on top and answers."""
    beacons: list[str] = []
    page.on("request", lambda req: beacons.append(req.url) if BEACON in req.url else None)
    scenarios = write_scenarios(tmp_path / "scenarios.json")
    events = as_session(record(ATTACK_PROMPT, tmp_path / "attack.jsonl", "ask", scenarios))
    ask_at = next(i for i, e in enumerate(events) if e["event"]["type"] == "permission_request")
    request = events[ask_at]["event"]
    page.evaluate("(events) => feed(events)", events[: ask_at + 1])
    params = {"sessionId": "S", "toolCallId": request["toolCallId"], "tool": request["tool"]}
    params |= {"args": request["args"], "options": request.get("options") or ["allow_once"]}
    page.evaluate("(params) => ask(9, params)", params)
    page.locator("article.item--tool.tool--asking").first.wait_for()
    page.get_by_text("Here is the summary").wait_for()
    page.screenshot(path=str(ARTIFACTS / "webview-model-html-attack.png"))
    assert page.evaluate(FINDINGS_JS) == []
    allow = "article.item--tool.tool--asking button[data-option='allow_once']"
    assert page.evaluate(COVERED_JS, allow) == ""
    page.locator(allow).click(timeout=scaled(5) * 1000)
    page.wait_for_function("window.posted.some((m) => m.type === 'serverResponse')")
    (answer,) = posted(page, "serverResponse")
    assert answer["result"] == {"outcome": "allow_once"}
    assert beacons == []


def test_the_slash_menu_offers_custom_commands_and_clear_is_no_prompt(page: Any) -> None:
    """The chat view's `/` menu: the chat's own commands and the session's custom ones (the
    webview asks the extension for `session/commands`); a picked custom command goes out as a
    prompt for the daemon to expand; `/clear` starts a new chat and sends no prompt."""
    box = page.get_by_role("textbox", name="Message")
    box.press_sequentially("/")
    menu = page.get_by_role("listbox", name="Commands")
    menu.wait_for()
    names = page.locator(".slash-menu .slash-name")
    names.nth(6).wait_for()
    assert names.all_inner_texts() == [
        "/clear", "/fork", "/compact", "/model", "/help", "/review", "/standup"
    ]  # fmt: skip
    asked = [m for m in posted(page, "request") if m["method"] == "session/commands"]
    assert asked[-1]["params"] == {"sessionId": "S"}
    page.screenshot(path=str(ARTIFACTS / "webview-slash-menu.png"))
    box.press_sequentially("rev")
    box.press("Tab")
    box.press_sequentially("src/a.py")
    box.press("Enter")
    page.wait_for_function(
        "window.posted.some((m) => m.type === 'request' && m.method === 'session/prompt')"
    )
    (prompt,) = [m for m in posted(page, "request") if m["method"] == "session/prompt"]
    assert prompt["params"] == {"sessionId": "S", "text": "/review src/a.py"}

    box.fill("/clear")
    box.press("Enter")
    page.wait_for_function("window.posted.some((m) => m.type === 'session' && !m.sessionId)")
    page.locator(".chat-title", has_text="New chat").wait_for()  # drawn on the next frame
    prompts = [m for m in posted(page, "request") if m["method"] == "session/prompt"]
    assert len(prompts) == 1


def test_the_processes_strip_shows_a_background_process_and_kills_it(
    page: Any, tmp_path: Path
) -> None:
    """A run of the real daemon that starts a background process: the strip above the
    transcript shows it running with its output; Kill asks the extension for
    `session/killProcess` of that process."""
    import json

    from tests.scenarios import tool_call
    from tests.vscode.model_html import BUILT_IN

    start = {
        "command": "echo ready-for-work; sleep 30",
        "background": True,
        "description": "worker",
    }
    scenario = {
        "name": "worker",
        "trigger": "start the worker",
        "steps": [
            {"response": {"tool_calls": [tool_call("bash", start)]}},
            {"delay_ms": 800, "response": {"content": "It works in the background."}},
        ],
    }
    scenarios = json.loads(BUILT_IN.read_text())
    scenarios["scenarios"].insert(0, scenario)
    (tmp_path / "scenarios.json").write_text(json.dumps(scenarios))
    events = as_session(
        record("start the worker", tmp_path / "run.jsonl", scenarios=tmp_path / "scenarios.json")
    )
    assert [e["event"]["type"] for e in events].count("process_start") == 1
    page.evaluate("(events) => feed(events)", events)
    strip = page.get_by_role("region", name="Background processes")
    strip.locator(".process-state", has_text="running").wait_for()
    assert strip.locator(".process-id").inner_text() == "p1"
    assert "(worker)" in strip.locator(".process-command").inner_text()
    assert "ready-for-work" in strip.locator(".process-tail").inner_text()
    page.screenshot(path=str(ARTIFACTS / "webview-processes.png"))
    strip.get_by_role("button", name="Kill").click()
    page.wait_for_function(
        "window.posted.some((m) => m.type === 'request' && m.method === 'session/killProcess')"
    )
    (kill,) = [m for m in posted(page, "request") if m["method"] == "session/killProcess"]
    assert kill["params"] == {"sessionId": "S", "processId": "p1"}
