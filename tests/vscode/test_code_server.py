"""End to end in a real VS Code: code-server with the built .vsix, driven through the command
palette by Playwright on the system Chromium. Screenshots go to
``editors/vscode/test-results/`` (kept as test artifacts)."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import scaled, wait_until
from tests.vscode.codeserver import CODE_SERVER, EXTENSION, VSIX, CodeServer, Workbench, chromium
from tests.vscode.conftest import build_extension, setup_code_server
from tests.web.chat_page import PICKER_FITS

# serial: code-server's workbench (and its Chromium) is too heavy beside the parallel run
pytestmark = [pytest.mark.e2e, pytest.mark.serial]

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
        page.set_default_timeout(scaled(30) * 1000)  # a loaded machine
        bench = Workbench(page, server, ARTIFACTS)
        bench.open()
        yield bench
        browser.close()


def test_no_daemon_until_first_use(server: CodeServer, workbench: Workbench) -> None:
    # onStartupFinished has run (a daemon it started would exist by now): the item is drawn
    workbench.page.locator("[id$='agentd.status']", has_text="agentd").wait_for(
        timeout=scaled(30) * 1000
    )
    assert "agentd" in workbench.status_item().inner_text()
    assert daemons(server.sessions) == []


def click_allow(chat: Any, tool: str) -> None:
    card = chat.locator("article.item--tool.tool--asking", has_text=tool).first
    card.wait_for(timeout=scaled(30) * 1000)
    card.locator("button[data-option='allow_once']").click()


def test_prompt_streams_asks_and_writes(server: CodeServer, workbench: Workbench) -> None:
    workbench.run_command("agentd: Send Prompt")
    workbench.answer_input("hello world")
    chat = workbench.chat()
    chat.get_by_text("I'll create a hello world Python script").wait_for(timeout=scaled(30) * 1000)
    chat.locator("article.item--tool", has_text="write").first.wait_for()
    assert daemons(server.sessions), "the first prompt started the daemon"
    workbench.page.locator("[id$='agentd.status']", has_text="approve").wait_for(
        timeout=scaled(10) * 1000
    )
    workbench.screenshot("01-approval")

    click_allow(chat, "write")
    click_allow(chat, "bash")
    chat.get_by_text("Done! hello.py prints").wait_for(timeout=scaled(30) * 1000)
    assert (server.workspace / "hello.py").read_text() == "print('Hello, World!')\n"
    bash = chat.locator("article.item--tool", has_text="bash").first
    assert "exit 0" in bash.locator(".tool-status").inner_text()
    assert "Hello, World!" in bash.locator(".tool-output").inner_text()
    workbench.screenshot("02-done")
    fits = chat.locator(".model-picker").evaluate(PICKER_FITS)
    assert fits["chosen"] == "mock/mock-model", fits
    assert fits["have"] >= fits["need"], f"the model picker cuts its model off: {fits}"

    chat.locator("article.item--tool", has_text="write").first.locator("button.open-diff").click()
    tab = workbench.page.locator(".tabs-container .tab", has_text="hello.py (agent edit)")
    tab.wait_for(timeout=scaled(15) * 1000)
    diff = workbench.page.locator(".monaco-diff-editor").first
    diff.locator(".editor.modified .view-line", has_text="Hello, World!").wait_for(
        timeout=scaled(15) * 1000
    )
    assert diff.locator(".editor.original .view-line", has_text="Hello").count() == 0  # created
    workbench.screenshot("03-diff")

    chat.locator("article.item--tool", has_text="write").first.locator(".tool-location").click()
    editor_tab = workbench.page.locator(".tabs-container .tab[aria-label^='hello.py,']")
    editor_tab.wait_for(timeout=scaled(15) * 1000)


def wait_idle(workbench: Workbench) -> None:
    workbench.page.locator("[id$='agentd.status']", has_text="agentd").wait_for()

    def idle() -> bool:
        text = workbench.status_item().inner_text()
        return "approve" not in text and "agentd:" not in text and "sync" not in text

    wait_until(idle, 30, "an idle status item", 0.2)


def allow_in_notification(workbench: Workbench, summary: str, shot: str | None = None) -> None:
    toast = workbench.page.locator(".notification-toast", has_text=f"agentd wants to {summary}")
    toast.wait_for(timeout=scaled(30) * 1000)
    if shot:
        workbench.screenshot(shot)
    toast.get_by_role("button", name="Allow once").click()
    toast.wait_for(state="detached")


def test_approvals_go_to_notifications_while_the_chat_is_hidden(
    server: CodeServer, workbench: Workbench
) -> None:
    (server.workspace / "hello.py").unlink()
    workbench.run_command("agentd: Send Prompt")
    workbench.answer_input("hello world")
    chat = workbench.chat()
    chat.locator("article.item--tool.tool--asking", has_text="write").wait_for(
        timeout=scaled(30) * 1000
    )
    workbench.page.keyboard.press("Control+B")  # hide the side bar, and the chat with it
    allow_in_notification(workbench, "write hello.py (new file, 1 line)", shot="04-notification")
    allow_in_notification(workbench, f"run: python3 hello.py (in {server.workspace})")
    wait_until((server.workspace / "hello.py").exists, 30, "hello.py to be written", 0.2)
    assert (server.workspace / "hello.py").read_text() == "print('Hello, World!')\n"
    workbench.page.keyboard.press("Control+B")
    chat = workbench.chat()
    chat.locator(".item--assistant", has_text="Done! hello.py prints").nth(1).wait_for()


def open_file(workbench: Workbench, path: Path) -> None:
    """Open a file through Quick Open by its absolute path (no wait for the search index)."""
    workbench.palette()
    box = workbench.page.locator(".quick-input-widget input")
    box.wait_for()
    box.fill(str(path))
    row = workbench.page.locator(".quick-input-list .monaco-list-row", has_text=path.name).first
    row.wait_for(timeout=scaled(15) * 1000)
    row.click()
    workbench.page.locator(".tabs-container .tab", has_text=path.name).wait_for()


def test_an_edited_file_is_refreshed_in_its_editor(
    server: CodeServer, workbench: Workbench
) -> None:
    (server.workspace / "greeting.txt").write_text("Hello there\n")
    open_file(workbench, server.workspace / "greeting.txt")
    editor = workbench.page.locator(".editor-instance .monaco-editor .view-lines").first
    editor.get_by_text("Hello there").wait_for()
    workbench.run_command("agentd: Send Prompt")
    workbench.answer_input("fix the greeting")
    chat = workbench.chat()
    click_allow(chat, "edit")
    try:
        editor.get_by_text("Goodbye there").wait_for(timeout=scaled(15) * 1000)
    finally:
        workbench.screenshot("05-refreshed")
    assert (server.workspace / "greeting.txt").read_text() == "Goodbye there\n"
    workbench.screenshot("05-refreshed")
    # The edit went through the editor (fs/writeTextFile): it is saved and can be undone.
    tab = workbench.page.locator(".tabs-container .tab", has_text="greeting.txt")
    assert "dirty" not in (tab.get_attribute("class") or "")
    editor.click()
    workbench.page.keyboard.press("Control+Z")
    editor.get_by_text("Hello there").wait_for(timeout=scaled(5) * 1000)


def test_send_selection_and_fix_problems(server: CodeServer, workbench: Workbench) -> None:
    (server.workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    open_file(workbench, server.workspace / "calc.py")
    workbench.page.locator(".editor-instance .monaco-editor .view-lines").first.click()
    workbench.page.keyboard.press("Control+A")
    workbench.run_command("agentd: Send Selection")
    workbench.answer_input("why does add subtract")
    chat = workbench.chat()
    sent = chat.locator(".item--user", has_text="why does add subtract").first
    sent.wait_for(timeout=scaled(15) * 1000)
    assert "calc.py:L1-L2" in sent.inner_text()
    assert "return a - b" in sent.inner_text()
    wait_idle(workbench)

    (server.workspace / "bad.json").write_text('{"a": 1,, "b": }\n')
    open_file(workbench, server.workspace / "bad.json")
    problems = workbench.page.locator("[id='status.problems']")
    wait_until(lambda: problems.inner_text().split()[0] != "0", 30, "bad.json's problems", 0.3)
    workbench.run_command("agentd: Fix Problems in File")
    asked = chat.locator(".item--user", has_text="Fix these problems in bad.json").first
    asked.wait_for(timeout=scaled(15) * 1000)
    assert "bad.json:1:" in asked.inner_text()
    assert "error" in asked.inner_text()
    workbench.screenshot("06-fix-problems")


def test_cancel_and_open_session(server: CodeServer, workbench: Workbench) -> None:
    chat = workbench.chat()
    workbench.run_command("agentd: New Session")
    chat.locator(".item").first.wait_for(
        state="detached", timeout=scaled(15) * 1000
    )  # the empty session
    workbench.run_command("agentd: Send Prompt")
    workbench.answer_input("be slow")
    chat.locator(".item--assistant.streaming").first.wait_for(timeout=scaled(15) * 1000)
    workbench.run_command("agentd: Cancel")
    chat.locator("footer.cost", has_text="last run: cancelled").wait_for(timeout=scaled(15) * 1000)
    wait_idle(workbench)

    workbench.run_command("agentd: Open Session")
    rows = workbench.page.locator(".quick-input-list .monaco-list-row")
    rows.nth(1).wait_for(timeout=scaled(15) * 1000)
    assert rows.count() == 2  # the first session of this module and the one just cancelled
    workbench.screenshot("07-open-session")
    rows.nth(1).click()
    chat.locator(".item--user", has_text="hello world").first.wait_for(timeout=scaled(15) * 1000)
    assert chat.locator(".item--user", has_text="be slow").count() == 0
