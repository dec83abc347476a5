"""The agent's plan in agentctl: a checklist redrawn in place on a terminal (tmux), plain
lines on a pipe. Real daemon, mock LLM."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.agentctl.harness import Sandbox
from tests.agentctl.screen import Screen
from tests.harness import scaled
from tests.scenarios import E2E_SCENARIOS

pytestmark = pytest.mark.e2e


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    opened: list[Screen] = []
    yield opened
    for screen in opened:
        screen.close()


def _send(sandbox: Sandbox) -> list[str]:
    return [sys.executable, "-m", "agentctl", "send", "--stdio", "--provider", "mock"]


def test_plan_is_redrawn_in_place_on_a_terminal(sandbox: Sandbox, screens: list[Screen]) -> None:
    """Two plans in a row leave one checklist on the screen, scrollback included: the
    latest, every step done; no todo call line and no spinner frame stay behind."""
    sandbox.use_scenarios(E2E_SCENARIOS)
    screen = Screen([*_send(sandbox), "update the plan quietly"], sandbox.env, sandbox.project)
    screens.append(screen)
    screen.wait_for("plan  1/3 done")
    code, shown = screen.finish()
    assert code == 0, shown
    assert shown.count("◆ plan") == 1, shown
    lines = shown.splitlines()
    start = lines.index("◆ plan  3/3 done")
    assert lines[start + 1 : start + 4] == [
        "  ✔ Read the parser",
        "  ✔ Fix the off-by-one",
        "  ✔ Run the tests",
    ], shown
    assert "Finished quietly." in shown
    assert "todo" not in shown


def test_plan_is_plain_lines_on_a_pipe(sandbox: Sandbox) -> None:
    """Piped, each plan is printed once as lines, in order, without escape sequences."""
    sandbox.use_scenarios(E2E_SCENARIOS)
    done = subprocess.run(
        [*_send(sandbox), "work through a plan"],
        env=sandbox.env,
        cwd=sandbox.project,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr
    assert "\x1b" not in shown
    first = shown.index("◆ plan  1/3 done\n  ✔ Read the parser\n  ▸ Fix the off-by-one\n")
    assert shown.index("◆ plan  3/3 done\n  ✔ Read the parser\n  ✔ Fix the off-by-one") > first
