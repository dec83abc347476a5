"""The problems a change introduced, printed under its call on a real terminal (tmux): the mock
LLM's edit calls an undefined name, the real pylsp (pyflakes) reports it, and ``agentctl send``
prints it right under the edit; the edit that fixes it prints none. Real daemon, real server."""

from __future__ import annotations

import sys

import pytest

from tests.agentctl.harness import Sandbox
from tests.agentctl.screen import Screen
from tests.langserver.conftest import SCENARIOS, make_project, pylsp_table

pytestmark = pytest.mark.e2e


def _send(sandbox: Sandbox, prompt: str) -> str:
    argv = [sys.executable, "-m", "agentctl", "send", "--stdio", "--provider", "mock", prompt]
    screen = Screen(argv, sandbox.env, sandbox.project)
    try:
        code, text = screen.finish()
    finally:
        screen.close()
    assert code == 0, text
    return text


def _line_after(text: str, call: str) -> str:
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if call in line)
    return lines[at + 1]


def test_the_new_problem_is_printed_under_the_edit(sandbox: Sandbox) -> None:
    make_project(sandbox.project)
    sandbox.use_scenarios(SCENARIOS)
    sandbox.user_config(pylsp_table())
    broken = _send(sandbox, "lsp-break")
    under = _line_after(broken, "● edit  main.py  (+1 −1)")
    assert under == "  main.py:5:19 error: undefined name 'undefined_x'", broken
    assert "lsp-break done" in broken

    fixed = _send(sandbox, "lsp-fix")
    assert "● edit  main.py  (+1 −1)" in fixed
    assert "error:" not in fixed
    assert "lsp-fix done" in fixed
