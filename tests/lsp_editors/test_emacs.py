"""Emacs 28 with eglot (``emacs --batch``) runs ``agentd lsp`` with the README's eglot
configuration: ``agentd-prompt`` sends ``agentd.prompt`` through ``eglot-execute-command``
and the agent's edit is applied to the buffer (modified, unsaved, undone by ``undo``); the
same with lsp-mode 8 and the README's lsp-mode snippet (``agentd-lsp-prompt``), whose message
shows the answer read from lsp-mode's hash table."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Home, scaled
from tests.lsp_editors.harness import (
    DRAFT,
    FIXED_DRAFT,
    FIXED_GREETING,
    GREETING,
    editor_env,
    find_emacs,
    snippet,
)

pytestmark = pytest.mark.e2e  # real emacs, a real `agentd lsp` and the mock LLM over HTTP

DRIVER = Path(__file__).parent / "eglot_driver.el"


def elisp_string(text: str) -> str:
    return json.dumps(text)  # a JSON string of ASCII text reads as the same Lisp string


def run_emacs(home: Home, prompt: str, draft: str | None = None, stdin: str = "") -> dict[str, Any]:
    """``emacs --batch`` with the README's eglot snippet: visit notes.txt, run ``prompt``
    with ``agentd-prompt`` (after replacing the buffer's text with ``draft``, unsaved), undo;
    returns what the driver saw. ``stdin`` answers minibuffer questions."""
    emacs = find_emacs()
    config = home.root / "agentd-eglot.el"
    config.write_text(snippet("eglot"))
    out = home.root / "emacs-result.json"
    timeout = scaled(90)
    call = (
        f"(agentd-test-run {elisp_string(str(home.project / 'notes.txt'))}"
        f" {elisp_string(prompt)} {elisp_string(str(out))} {timeout}"
        f" {elisp_string(draft) if draft is not None else 'nil'})"
    )
    argv = [emacs, "--batch", "-l", str(config), "-l", str(DRIVER), "--eval", call]
    done = subprocess.run(
        argv,
        cwd=home.project,
        env={**editor_env(home), "HOME": str(home.root)},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout + scaled(30),
        check=False,
    )
    seen = json.loads(out.read_text()) if out.exists() else {}
    events = seen.pop("events", "")
    failure = (
        f"emacs exited {done.returncode}: {seen}\n--- stderr:\n{done.stderr[-6000:]}"
        f"\n--- eglot events:\n{events}"
    )
    assert done.returncode == 0, failure
    assert "error" not in seen, failure
    return dict(seen)


def test_eglot_applies_the_edit_to_the_buffer(home: Home) -> None:
    notes = home.project / "notes.txt"
    notes.write_text(GREETING)
    seen = run_emacs(home, "fix the greeting")
    assert seen["serverName"] == "agentd"
    assert seen["answer"]["stopReason"] == "end_turn"
    assert "now says hello agentd" in seen["answer"]["text"]
    assert seen["edited"] == FIXED_GREETING
    assert seen["modified"] is True
    assert notes.read_text() == GREETING  # the edit went through eglot, not the disk
    assert seen["undone"] == GREETING
    assert seen["modifiedAfterUndo"] is False
    assert seen["serverAlive"] is False  # eglot-shutdown ended `agentd lsp`


def test_eglot_sends_the_unsaved_text(home: Home) -> None:
    notes = home.project / "notes.txt"
    notes.write_text("the text on disk\n")
    seen = run_emacs(home, "fix the unsaved draft", draft=DRAFT)
    assert seen["answer"]["stopReason"] == "end_turn"
    assert seen["edited"] == FIXED_DRAFT
    assert seen["undone"] == DRAFT
    assert notes.read_text() == "the text on disk\n"


@pytest.mark.parametrize(("answer", "applied"), [("Allow once", True), ("Reject", False)])
def test_eglot_approvals_in_the_minibuffer(home: Home, answer: str, applied: bool) -> None:
    """In ``ask`` mode eglot asks "Choose an option" in the minibuffer (read from stdin in
    batch mode): Allow once lets the edit land, Reject leaves the buffer as it was."""
    home.user_config('provider = "mock"\npermission_mode = "ask"\n', auto=False)
    (home.project / "notes.txt").write_text(GREETING)
    seen = run_emacs(home, "fix the greeting", stdin=f"{answer}\n")
    assert seen["answer"]["stopReason"] == "end_turn"
    assert seen["edited"] == (FIXED_GREETING if applied else GREETING)
    assert seen["modified"] is applied


# --- lsp-mode -------------------------------------------------------------------------------

LSP_MODE_DRIVER = Path(__file__).parent / "lsp_mode_driver.el"


def find_lsp_mode() -> str:
    """The ``emacs`` binary if it loads lsp-mode, or skip the test with the reason."""
    emacs = find_emacs()
    probe = [emacs, "--batch", "--eval", "(require 'lsp-mode)"]
    if subprocess.run(probe, capture_output=True, timeout=scaled(120), check=False).returncode:
        pytest.skip(f"{emacs} cannot load lsp-mode (apt-get install elpa-lsp-mode)")
    return emacs


def run_lsp_mode(home: Home, prompt: str) -> tuple[dict[str, Any], str]:
    """``emacs --batch`` with the README's lsp-mode snippet: visit notes.txt, ``M-x lsp``,
    run ``prompt`` with ``agentd-lsp-prompt``, undo; what the driver saw and Emacs' stderr
    (where batch mode prints the echo area's messages)."""
    emacs = find_lsp_mode()
    config = home.root / "agentd-lsp-mode.el"
    config.write_text(snippet("lsp-mode"))
    out = home.root / "lsp-mode-result.json"
    timeout = scaled(90)
    call = (
        f"(agentd-lsp-test-run {elisp_string(str(home.project / 'notes.txt'))}"
        f" {elisp_string(prompt)} {elisp_string(str(out))} {timeout})"
    )
    argv = [emacs, "--batch", "-l", str(config), "-l", str(LSP_MODE_DRIVER), "--eval", call]
    done = subprocess.run(
        argv,
        cwd=home.project,
        env={**editor_env(home), "HOME": str(home.root)},
        capture_output=True,
        text=True,
        timeout=timeout + scaled(30),
        check=False,
    )
    seen = json.loads(out.read_text()) if out.exists() else {}
    events = seen.pop("events", "")
    failure = f"emacs exited {done.returncode}: {seen}\n--- stderr:\n{done.stderr[-6000:]}"
    failure += f"\n--- lsp-mode I/O:\n{events}"
    assert done.returncode == 0, failure
    assert "error" not in seen, failure
    return dict(seen), done.stderr


def test_lsp_mode_shows_the_answer_and_edits_the_buffer(home: Home) -> None:
    """The snippet's message (batch mode prints it on stderr) names the stop reason and the
    text (lsp-mode's answer is a hash table, read with ``lsp-get``), and the agent's edit
    lands in the buffer, unsaved."""
    notes = home.project / "notes.txt"
    notes.write_text(GREETING)
    seen, stderr = run_lsp_mode(home, "fix the greeting")
    assert seen["answerType"] == "hash-table"  # lsp-mode's default (not built with plists)
    assert seen["stopReason"] == "end_turn"
    assert "now says hello agentd" in seen["text"]
    shown = [line for line in stderr.splitlines() if line.startswith("agentd (")]
    assert len(shown) == 1, stderr[-3000:]
    assert shown[0].startswith("agentd (end_turn): ")
    assert "now says hello agentd" in shown[0]
    assert "agentd (nil): nil" not in stderr
    assert seen["edited"] == FIXED_GREETING
    assert seen["modified"] is True
    assert notes.read_text() == GREETING  # the edit went through lsp-mode, not the disk
    assert seen["undone"] == GREETING
