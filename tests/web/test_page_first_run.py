"""A newcomer's first minute in the chat page, at 1280 and 390 px (real Chromium, real daemon):
the empty chat says what to do; while the first run goes, the header shows the prompt, not a
session id; "Add image" attaches through the file chooser (a phone has no paste or drop of
files), and a sent image shows as a thumbnail in the prompt, also when the chat is reopened."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scenarios import tool_call
from tests.web.chat_page import IDLE, PICKER_FITS, new_context, open_page, send, shoot
from tests.web.conftest import WebDaemon, web_daemon
from tests.web.test_page_images import PNG

pytest.importorskip("playwright")
from playwright.sync_api import Browser, expect

from tests.web.chat_page import browser, width  # noqa: F401  (fixtures)

SLOW = {
    "name": "first-run-slow",
    "trigger": "tidy the imports slowly",
    "steps": [
        {
            "response": {
                "content": "Looking first.",
                "tool_calls": [tool_call("bash", {"command": "sleep 30"}, "slow1")],
            }
        },
        {"response": {"content": "Tidied."}},
    ],
}


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    with web_daemon([SLOW]) as daemon:
        yield daemon


def test_the_empty_chat_says_what_to_do_and_the_first_prompt_titles_it(
    browser: Browser,  # noqa: F811
    web: WebDaemon,
    width: str,  # noqa: F811
    artifacts: Path,
) -> None:
    context = new_context(browser, web, width)
    page = open_page(context, web)
    hint = page.get_by_role("note")
    expect(hint).to_be_visible()
    expect(hint).to_contain_text(f"Ask agentd to do something in {web.home.project}")
    expect(hint).to_contain_text("type it below and press Enter")
    expect(hint).to_contain_text("Add image")
    shoot(page, artifacts, f"first-run-empty-{width}")

    send(page, "tidy the imports slowly")
    expect(page.locator(".tool-status", has_text="running")).to_be_visible()
    title = page.locator(".chat-title")
    expect(title).to_have_text("tidy the imports slowly")  # during the first run
    expect(hint).to_be_hidden()
    fits = page.locator(".model-picker").evaluate(PICKER_FITS)
    assert fits["chosen"] == "mock/mock-model", fits
    assert fits["have"] >= fits["need"], f"the model picker cuts its model off: {fits}"
    shoot(page, artifacts, f"first-run-title-{width}")
    page.get_by_role("button", name="Stop").click()
    page.wait_for_function(IDLE)
    expect(title).to_have_text("tidy the imports slowly")
    context.close()


def test_add_image_attaches_and_a_sent_image_shows_as_a_thumbnail(
    browser: Browser,  # noqa: F811
    web: WebDaemon,
    width: str,  # noqa: F811
    artifacts: Path,
    tmp_path: Path,
) -> None:
    picture = tmp_path / "diagram.png"
    picture.write_bytes(PNG)
    context = new_context(browser, web, width)
    page = open_page(context, web)
    add = page.get_by_role("button", name="Add image")
    expect(add).to_be_visible()
    with page.expect_file_chooser() as chosen:
        add.click()
    chosen.value.set_files(str(picture))
    expect(page.get_by_role("list", name="Attached images").locator("img")).to_have_count(1)
    shoot(page, artifacts, f"first-run-attached-{width}")

    send(page, "how are you")
    page.wait_for_function(IDLE)
    sent = page.locator(".item--user").last.get_by_role("list", name="Images sent")
    thumb = sent.get_by_role("listitem")
    expect(thumb).to_have_count(1)
    expect(thumb).to_have_attribute("alt", "image 1 of 1")
    assert thumb.evaluate("(img) => img.complete && img.naturalWidth") == 24  # it decoded
    expect(page.locator(".item--user").last).to_contain_text("how are you")
    shoot(page, artifacts, f"first-run-sent-image-{width}")

    session_id = page.url.split("#session=", 1)[1]
    messages = web.rpc("session/messages", {"sessionId": session_id})["messages"]
    user = next(m for m in messages if m["role"] == "user")
    assert [b["data"] for b in user["content"] if b["type"] == "image"] == [
        base64.b64encode(PNG).decode()
    ]
    again = open_page(context, web, session_id)  # a reopened chat shows it too
    expect(again.locator(".item--user").last.locator("img.user-image")).to_have_count(1)
    context.close()
