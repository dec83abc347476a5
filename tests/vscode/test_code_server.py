"""End to end in a real VS Code: code-server with the built .vsix, driven through the command
palette by Playwright on the system Chromium. Screenshots go to
``editors/vscode/test-results/`` (kept as test artifacts)."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.vscode.codeserver import CODE_SERVER, EXTENSION, VSIX, CodeServer, Workbench, chromium
from tests.vscode.conftest import build_extension, setup_code_server

pytestmark = pytest.mark.e2e

ARTIFACTS = EXTENSION / "test-results"


def daemons(session_dir: Path) -> list[str]:
    """Command lines of agentd processes serving this test's session dir."""
    pattern = f"--session-dir {session_dir}"
    found = subprocess.run(["pgrep", "-af", "--", pattern], capture_output=True, text=True)
    return [line for line in found.stdout.splitlines() if "agentd" in line and "pgrep" not in line]


@pytest.fixture(scope="module")
def server() -> Iterator[CodeServer]:
    browser = chromium()
    if browser is None:
        pytest.skip("no chromium on PATH (apt install chromium)")
    setup_code_server()
    build_extension(vsix=True)
    assert CODE_SERVER.exists()
    assert VSIX.exists()
    root = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp"))
    instance = CodeServer(root, settings={"agentd.permissionMode": "ask"})
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
        bench = Workbench(page, server, ARTIFACTS)
        bench.open()
        yield bench
        browser.close()


def test_no_daemon_until_first_use(server: CodeServer, workbench: Workbench) -> None:
    time.sleep(1.0)  # onStartupFinished has run: the status bar item is drawn
    assert "agentd" in workbench.status_item().inner_text()
    assert daemons(server.sessions) == []


def click_allow(chat: Any, tool: str) -> None:
    card = chat.locator("article.item--tool.tool--asking", has_text=tool).first
    card.wait_for(timeout=30_000)
    card.locator("button[data-option='allow_once']").click()


def test_prompt_streams_asks_and_writes(server: CodeServer, workbench: Workbench) -> None:
    workbench.run_command("agentd: Send Prompt")
    workbench.answer_input("hello world")
    chat = workbench.chat()
    chat.get_by_text("I'll create a hello world Python script").wait_for(timeout=30_000)
    chat.locator("article.item--tool", has_text="write").first.wait_for()
    assert daemons(server.sessions), "the first prompt started the daemon"
    workbench.page.locator("[id$='agentd.status']", has_text="approve").wait_for(timeout=10_000)
    workbench.screenshot("01-approval")

    click_allow(chat, "write")
    click_allow(chat, "bash")
    chat.get_by_text("Done! hello.py prints").wait_for(timeout=30_000)
    assert (server.workspace / "hello.py").read_text() == "print('Hello, World!')\n"
    bash = chat.locator("article.item--tool", has_text="bash").first
    assert "exit 0" in bash.locator(".tool-status").inner_text()
    assert "Hello, World!" in bash.locator(".tool-output").inner_text()
    workbench.screenshot("02-done")

    chat.locator("article.item--tool", has_text="write").first.locator("button.open-diff").click()
    tab = workbench.page.locator(".tabs-container .tab", has_text="hello.py (agent edit)")
    tab.wait_for(timeout=15_000)
    diff = workbench.page.locator(".monaco-diff-editor").first
    diff.locator(".editor.modified .view-line", has_text="Hello, World!").wait_for(timeout=15_000)
    assert diff.locator(".editor.original .view-line", has_text="Hello").count() == 0  # created
    workbench.screenshot("03-diff")
