"""Nothing of the live display stays in the scrollback: on a real terminal (tmux), after a
reply or a Ctrl-C, the screen holds the answer, each call's final line and the footer — no
frozen spinner frame, no stale running-call line. Real daemon, mock LLM."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from tests.agentctl.harness import Sandbox
from tests.agentctl.screen import Screen
from tests.scenarios import E2E_SCENARIOS

pytestmark = pytest.mark.e2e

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    opened: list[Screen] = []
    yield opened
    for screen in opened:
        screen.close()


def send_on_screen(sandbox: Sandbox, screens: list[Screen], *args: str) -> Screen:
    command = [sys.executable, "-m", "agentctl", "send", "--stdio", "--provider", "mock", *args]
    screen = Screen(command, sandbox.env, sandbox.project)
    screens.append(screen)
    return screen


def test_no_thinking_line_is_left_above_the_answer(sandbox: Sandbox, screens: list[Screen]) -> None:
    code, shown = send_on_screen(sandbox, screens, "how are you").finish()
    assert code == 0
    lines = shown.splitlines()
    assert lines[0].startswith("I'm doing well"), shown
    assert shown.count("I'm doing well") == 1, shown  # the raw line was replaced, not kept
    assert "thinking" not in shown
    assert not any(frame in shown for frame in SPINNER)
    assert "done" in lines[-1]


def test_ctrl_c_leaves_no_stale_running_call_line(sandbox: Sandbox, screens: list[Screen]) -> None:
    sandbox.use_scenarios(E2E_SCENARIOS)
    screen = send_on_screen(sandbox, screens, "sleep in bash")
    screen.wait_for("sleep 30")
    screen.keys("C-c")
    code, shown = screen.finish()
    assert code == 130, shown
    assert "○" not in shown
    assert not any(frame in shown for frame in SPINNER)
    assert shown.count("Sleeping.") == 1, shown
    call_lines = [line for line in shown.splitlines() if "sleep 30" in line]
    assert len(call_lines) <= 1, shown  # at most the call's one final line
