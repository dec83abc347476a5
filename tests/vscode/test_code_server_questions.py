"""The agent's questions in a real VS Code (code-server with the built .vsix, Playwright on the
system Chromium): an ``ask_user`` call with a single and a multi-select question shows its card
in the chat webview, answered there by clicks; the answers are the tool's result (on the card
and in the session file), and the session opened again shows the card settled, from its
history. The scenario is the web chat's card test's (``tests/e2e/test_questions.py``).
Screenshots go to ``editors/vscode/test-results/``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from agentd.mockllm.scenarios import BUILT_IN
from tests.e2e.test_questions import ASK
from tests.harness import scaled
from tests.vscode.codeserver import CodeServer, Workbench
from tests.vscode.test_code_server_security import prepared, workbench_on  # noqa: F401

# serial: like test_code_server.py, code-server is too heavy beside the parallel run
pytestmark = [pytest.mark.e2e, pytest.mark.serial]

SETTLED = "Database: SQLite · Features: Auth, Export"


def _answer_in_the_card(workbench: Workbench, chat: Any) -> None:
    form = chat.locator("article.item--tool.tool--asking .ask-form")
    form.wait_for(timeout=scaled(60) * 1000)
    assert form.locator(".ask-header").all_inner_texts() == ["Database", "Features"]
    assert form.get_by_role("button", name="Answer").is_disabled()
    workbench.screenshot("cs-question")
    form.get_by_role("button", name="SQLite").click()
    assert form.get_by_role("button", name="SQLite").get_attribute("aria-pressed") == "true"
    form.get_by_label("Auth").check()
    form.get_by_label("Export").check()
    form.get_by_role("button", name="Answer").click()


def _tool_result(sessions: Path) -> str:
    """The text of the one tool result in the session files under ``sessions``."""
    texts = []
    for path in sessions.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            message = json.loads(line).get("message") or {}
            if message.get("role") == "tool_result":
                texts.append("".join(b.get("text", "") for b in message["content"]))
    [text] = texts
    return text


def test_a_question_card_is_answered_in_the_workbench(prepared: None) -> None:  # noqa: F811
    root = Path(tempfile.mkdtemp(prefix="cs-questions-", dir="/tmp"))
    builtin = json.loads(BUILT_IN.read_text())
    scenarios = root / "scenarios.json"
    scenarios.write_text(json.dumps({**builtin, "scenarios": [ASK, *builtin["scenarios"]]}))
    server = CodeServer(root, env_extra={"AGENTD_MOCK_SCENARIOS": str(scenarios)})
    with workbench_on(server) as workbench:
        workbench.run_command("agentd: Send Prompt")
        workbench.answer_input("ask me about the plan")
        chat: Any = workbench.chat()
        _answer_in_the_card(workbench, chat)
        chat.get_by_text("Going with what you chose.").wait_for(timeout=scaled(60) * 1000)
        card = chat.locator("article.item--tool", has_text="ask_user").first
        assert card.locator(".ask-settled").inner_text() == SETTLED
        assert "= Auth, Export" in card.locator(".tool-output").inner_text()
        workbench.screenshot("cs-question-answered")
        assert _tool_result(server.sessions) == (
            "The user answered:\n"
            '"Which database should the service use?" = SQLite\n'
            '"Which features go in the first release?" = Auth, Export'
        )
        workbench.run_command("agentd: New Session")
        card.wait_for(state="detached", timeout=scaled(15) * 1000)
        workbench.run_command("agentd: Open Session")
        row = workbench.page.locator(".quick-input-list .monaco-list-row", has_text="ask me")
        row.first.click(timeout=scaled(15) * 1000)
        again = chat.locator("article.item--tool", has_text="ask_user").first
        again.locator(".ask-settled").wait_for(timeout=scaled(15) * 1000)
        assert again.locator(".ask-settled").inner_text() == SETTLED
        workbench.screenshot("cs-question-reopened")
