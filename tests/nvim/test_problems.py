"""The problems an edit introduced, in the transcript under its diff (a real nvim, a real
daemon, the real pylsp): the mock LLM's edit calls an undefined name and pyflakes says so."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness import Home
from tests.langserver.conftest import SCENARIOS, make_project, pylsp_table
from tests.nvim.harness import Editor

pytestmark = pytest.mark.e2e  # real nvim, a real daemon and a real language server


@pytest.fixture
def home() -> Iterator[Home]:
    """The Python fixture project with pylsp as its server and the edit scenarios."""
    box = Home()
    make_project(box.project)
    box.use_scenarios(SCENARIOS)
    box.user_config(pylsp_table())
    try:
        yield box
    finally:
        box.cleanup()


def test_the_transcript_lists_the_problems_under_the_diff(editor: Editor) -> None:
    editor.nvim.command("Agent lsp-break")
    text = editor.wait_run_end(timeout=90)
    assert "▸ ✓ edit  main.py  +1 -1" in text
    assert "│ +    return helper(undefined_x)" in text
    assert "│ 1 new problem the language server reports:" in text
    assert "│ ✗ main.py:5:19 error: undefined name 'undefined_x' (pyflakes)" in text
    editor.nvim.command("Agent lsp-fix")
    text = editor.wait_run_end(2, timeout=90)
    after_fix = text.rsplit("▍You", 1)[1]  # the second prompt and its run
    assert "▸ ✓ edit  main.py  +1 -1" in after_fix
    assert "new problem" not in after_fix
