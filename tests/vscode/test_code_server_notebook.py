"""A notebook edit in a real VS Code (code-server with the built .vsix, Playwright on the
system Chromium): the chat's approval shows the diff of the cell's source, and so does the
finished card; the notebook on disk has the new source. The scenario and the notebook are
those of the web chat's card test (``tests/web/test_page_notebook.py``). Screenshots go to
``editors/vscode/test-results/``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from agentd.mockllm.scenarios import BUILT_IN
from tests.documents.notebooks import write_notebook
from tests.harness import scaled
from tests.vscode.codeserver import CodeServer
from tests.vscode.test_code_server_security import prepared, workbench_on  # noqa: F401
from tests.web.test_page_notebook import SCENARIO

# serial: like test_code_server.py, code-server is too heavy beside the parallel run
pytestmark = [pytest.mark.e2e, pytest.mark.serial]


def test_the_cell_diff_is_shown_before_and_after(prepared: None) -> None:  # noqa: F811
    root = Path(tempfile.mkdtemp(prefix="cs-notebook-", dir="/tmp"))
    builtin = json.loads(BUILT_IN.read_text())
    scenarios = root / "scenarios.json"
    scenarios.write_text(json.dumps({**builtin, "scenarios": [SCENARIO, *builtin["scenarios"]]}))
    server = CodeServer(
        root,
        settings={"agentd.permissionMode": "ask"},
        env_extra={"AGENTD_MOCK_SCENARIOS": str(scenarios)},
    )
    server.workspace.mkdir(parents=True, exist_ok=True)
    notebook = server.workspace / "nb.ipynb"
    write_notebook(notebook)
    with workbench_on(server) as workbench:
        workbench.run_command("agentd: Send Prompt")
        workbench.answer_input("change the notebook cell")
        chat: Any = workbench.chat()
        card = chat.locator("article.item--tool.tool--asking", has_text="notebook_edit").first
        card.wait_for(timeout=scaled(60) * 1000)
        box = card.get_by_role("group")
        assert box.locator(".approval-path").inner_text() == "nb.ipynb#cell2"
        assert box.locator(".approval-diff .diff-del").all_inner_texts() == ["-print('hello')\n"]
        assert box.locator(".approval-diff .diff-add").all_inner_texts() == ["+print('bye')\n"]
        workbench.screenshot("cs-notebook-approval")
        card.locator("button[data-option='allow_once']").click(timeout=scaled(10) * 1000)
        chat.get_by_text("Finished.").wait_for(timeout=scaled(60) * 1000)
        diff = chat.locator("article.item--tool .tool-diff:visible")
        diff.first.wait_for(timeout=scaled(30) * 1000)
        assert diff.count() == 1
        assert diff.locator(".diff-del").all_inner_texts() == ["-print('hello')\n"]
        assert diff.locator(".diff-add").all_inner_texts() == ["+print('bye')\n"]
        workbench.screenshot("cs-notebook-card")
        assert b"print('bye')" in notebook.read_bytes()  # before the folder is removed
