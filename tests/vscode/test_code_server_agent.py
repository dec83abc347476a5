"""The agent's newer events in a real VS Code (code-server, the built .vsix, Playwright on the
system Chromium), one code-server for all three: an image pasted into the chat view goes to
the model with the prompt (read back from the mock LLM's recorded request), the plan of the
``todo`` tool is pinned above the transcript, and a subagent's steps nest under its ``task``
card. The image is pasted for real: put on the browser's clipboard, then Ctrl+V in the chat's
message box, through VS Code's webview key handling. The daemon talks to a mock LLM over real
HTTP (an ``openai`` provider in the user's config). Screenshots go to
``editors/vscode/test-results/``."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import BUILT_IN, parse_scenarios
from tests.harness import scaled, wait_until
from tests.scenarios import plan_steps
from tests.subagents.scenarios import SUBAGENT_SCENARIOS, task_call
from tests.vscode.codeserver import CODE_SERVER, EXTENSION, VSIX, CodeServer, Workbench, chromium
from tests.vscode.conftest import build_extension, setup_code_server
from tests.web.chat_page import PICKER_FITS
from tests.web.test_page_images import PNG

pytestmark = [pytest.mark.e2e, pytest.mark.serial]

ARTIFACTS = EXTENSION / "test-results"
PROVIDER = """[providers.mockhttp]
api = "openai"
base_url = "{url}"
models = ["mock-model"]
"""
COPY = """async ([b64]) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const png = new Blob([bytes], { type: 'image/png' });
  await navigator.clipboard.write([new ClipboardItem({ 'image/png': png })]);
}"""
"""Put a PNG on the browser's clipboard (as a screenshot tool would)."""


LONG_REPLY_TEXT = (
    "Checked every module of the parser package against the grammar: the tokenizer, the "
    "expression reader and the error recovery all agree, and nothing needs changing."
)
LONG_REPLY = [
    {
        "name": "delegate-long-report",
        "trigger": "delegate a long report",
        "steps": [
            {
                "response": {
                    "content": "Delegating.",
                    "tool_calls": [task_call("task_long", "child reporter: check the parser")],
                }
            },
            {"response": {"content": "The subagent reported."}},
        ],
    },
    {
        "name": "child-reporter",
        "trigger": "child reporter",
        "steps": [{"response": {"content": LONG_REPLY_TEXT}}],
    },
]
"""A subagent whose reply is longer than the sidebar is wide (its card must wrap it)."""


class ThreadedLLM:
    """A :class:`MockLLMServer` on its own event loop in a thread (the test is synchronous)."""

    def __init__(self) -> None:
        builtin = json.loads(BUILT_IN.read_text())
        mine = [plan_steps(), *SUBAGENT_SCENARIOS, *LONG_REPLY]
        self.server = MockLLMServer(
            parse_scenarios({**builtin, "scenarios": [*mine, *builtin["scenarios"]]})
        )
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> MockLLMServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(scaled(30))
        return self.server

    def __exit__(self, *exc_info: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(scaled(30))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(scaled(10))
        self.loop.close()


@pytest.fixture(scope="module")
def llm() -> Iterator[MockLLMServer]:
    with ThreadedLLM() as server:
        yield server


@pytest.fixture(scope="module")
def server(llm: MockLLMServer) -> Iterator[CodeServer]:
    if chromium() is None:
        pytest.skip("no chromium on PATH (apt install chromium)")
    setup_code_server()
    build_extension(vsix=True)
    assert CODE_SERVER.exists()
    assert VSIX.exists()
    root = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp"))
    config = root / "xdg" / "con" / "agentd" / "config.toml"
    config.parent.mkdir(parents=True, mode=0o700)
    config.write_text(PROVIDER.format(url=llm.url))
    settings = {
        "agentd.provider": "mockhttp",
        "agentd.model": "mock-model",
        "agentd.permissionMode": "ask",
    }
    instance = CodeServer(root, settings=settings)
    instance.start()
    try:
        yield instance
    finally:
        instance.stop()
        subprocess.run(["rm", "-rf", str(root)], check=False)


@pytest.fixture(scope="module")
def workbench(server: CodeServer) -> Iterator[Workbench]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(scaled(30) * 1000)  # a loaded machine
        bench = Workbench(page, server, ARTIFACTS)
        bench.open()
        yield bench
        browser.close()


def send(chat: Any, text: str) -> None:
    box = chat.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")


def wait_idle(chat: Any) -> None:
    chat.locator(".agentd-chat form:not(.running)").wait_for(timeout=scaled(30) * 1000)


def image_parts(request: dict[str, Any]) -> list[str]:
    """The ``image_url`` data URLs of a Chat Completions request's last user message."""
    user = [m for m in request.get("messages", []) if m.get("role") == "user"][-1]
    content = user.get("content")
    parts = content if isinstance(content, list) else []
    return [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]


def test_a_pasted_image_goes_with_the_prompt(llm: MockLLMServer, workbench: Workbench) -> None:
    page = workbench.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.evaluate(COPY, [base64.b64encode(PNG).decode()])
    workbench.run_command("agentd: Focus on Chat View")
    chat = workbench.chat()
    chat.get_by_role("textbox", name="Message").click()
    page.keyboard.press("Control+V")  # through VS Code's keybinding and webview paste
    thumbs = chat.get_by_role("list", name="Attached images").locator("img")
    thumbs.first.wait_for(timeout=scaled(10) * 1000)
    assert thumbs.count() == 1
    workbench.screenshot("10-image-attached")
    send(chat, "how are you")
    sent_thumb = chat.locator(".item--user", has_text="how are you").locator("img.user-image")
    sent_thumb.wait_for(timeout=scaled(30) * 1000)  # the sent image, as a thumbnail
    wait_idle(chat)
    asked = [r for r in llm.requests if "how are you" in json.dumps(r.get("messages", []))]
    assert asked, "the prompt reached the model"
    (url,) = image_parts(asked[-1])
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    sent = base64.b64decode(url[len(prefix) :])
    # the clipboard re-encodes the picture: the same 24x24 PNG, not the same bytes
    assert sent[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", sent[16:24]) == (24, 24)
    assert thumbs.count() == 0
    workbench.screenshot("11-image-sent")


def test_the_plan_is_pinned_above_the_transcript(workbench: Workbench) -> None:
    chat = workbench.chat()
    send(chat, "work through a plan")
    plan = chat.get_by_role("region", name="Plan")
    plan.get_by_text("Fix the off-by-one").wait_for(timeout=scaled(30) * 1000)
    wait_idle(chat)
    assert plan.get_by_text("Run the tests").count() == 1
    log = chat.locator(".log")
    plan_box, log_box = plan.bounding_box(), log.bounding_box()
    assert plan_box is not None
    assert log_box is not None
    assert plan_box["y"] + plan_box["height"] <= log_box["y"] + 1
    log.evaluate("(node) => { node.scrollTop = node.scrollHeight; }")
    assert plan.is_visible()  # pinned: scrolling the transcript leaves it in view
    workbench.screenshot("12-plan-pinned")


def test_a_subagents_steps_nest_under_its_task(server: CodeServer, workbench: Workbench) -> None:
    chat = workbench.chat()
    send(chat, "delegate a write")
    card = chat.locator("article.item--tool", has_text="task").last
    card.locator("button[data-option='allow_once']").click(
        timeout=scaled(30) * 1000
    )  # the child's write
    wait_until((server.workspace / "child.txt").exists, 30, "the child's child.txt", 0.2)
    chat.get_by_text("The subagent wrote it.").wait_for(timeout=scaled(30) * 1000)
    steps = card.get_by_role("list", name="The subagent's steps").locator("li")
    wait_until(lambda: steps.count() >= 3, 30, "the subagent's nested steps", 0.2)
    texts = [steps.nth(i).inner_text() for i in range(steps.count())]
    assert texts[0] == "Writing."
    assert texts[1].startswith("✓")
    assert "write" in texts[1]
    assert "child.txt" in texts[1]
    assert texts[-1] == "Wrote child.txt."
    assert "Subagent general · session" in card.locator(".tool-child-head").inner_text()
    # nested: inside the task's card, not cards of their own in the transcript
    assert chat.locator("article.item--tool", has_text="child.txt").count() == 1
    fits = chat.locator(".model-picker").evaluate(PICKER_FITS)
    assert fits["chosen"] == "mockhttp/mock-model", fits
    assert fits["have"] >= fits["need"], f"the model picker cuts its model off: {fits}"
    card.scroll_into_view_if_needed()
    workbench.screenshot("13-subagent-nested")


def test_a_subagents_long_reply_wraps_on_its_card(workbench: Workbench) -> None:
    """The subagent's last line (its reply) wraps in the default sidebar width: every word
    shows, none is cut off with an ellipsis; the card's head (profile, session) wraps too."""
    chat = workbench.chat()
    send(chat, "delegate a long report")
    chat.get_by_text("The subagent reported.").wait_for(timeout=scaled(30) * 1000)
    card = chat.locator("article.item--tool", has_text="task_long").last
    reply = card.get_by_role("list", name="The subagent's steps").locator("li").last
    reply.wait_for()
    assert reply.inner_text() == LONG_REPLY_TEXT
    box = reply.bounding_box()
    assert box is not None
    assert box["height"] > 2 * 14, "the reply wraps onto several lines"
    assert reply.evaluate("(li) => li.scrollWidth <= li.clientWidth"), "nothing cut off"
    head = card.locator(".tool-child-head")
    assert head.evaluate("(node) => node.scrollWidth <= node.clientWidth")
    card.scroll_into_view_if_needed()
    workbench.screenshot("14-subagent-long-reply")
