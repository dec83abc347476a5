"""The terminal's approval prompt shows the change before the key (tmux: what a person sees).

``agentctl send --permission ask`` in a real terminal, a real daemon and the mock LLM: an edit
shows its coloured diff with the path and +/- counts, a command shows itself and its directory,
and ``[a]lways`` names the rule it adds and that it lasts this session. One key answers.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agentctl.harness import Sandbox
from tests.agentctl.screen import Screen
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e
CAPTURES = Path(__file__).resolve().parents[2] / "test-artifacts" / "agentctl"


def _asking(trigger: str, name: str, args: dict[str, object]) -> dict[str, object]:
    return {
        "name": trigger,
        "trigger": trigger,
        "steps": [
            {"response": {"content": "Asking first.", "tool_calls": [tool_call(name, args)]}},
            {"response": {"content": "Finished."}},
        ],
    }


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    opened: list[Screen] = []
    yield opened
    for screen in opened:
        screen.close()


def _ask(sandbox: Sandbox, screens: list[Screen], prompt: str) -> Screen:
    argv = [sys.executable, "-m", "agentctl", "send", "--stdio", "--provider", "mock"]
    screen = Screen([*argv, "--permission", "ask", prompt], sandbox.env, sandbox.project)
    screens.append(screen)
    return screen


def _keep(name: str, text: str) -> None:
    CAPTURES.mkdir(parents=True, exist_ok=True)
    (CAPTURES / f"{name}.txt").write_text(text + "\n")


def test_an_edit_shows_its_diff_above_the_question(sandbox: Sandbox, screens: list[Screen]) -> None:
    lines = [f"setting_{n} = {n}\n" for n in range(12)]
    (sandbox.project / "config.py").write_text("".join(lines))
    args = {"path": "config.py", "old_string": "setting_6 = 6\n", "new_string": "setting_6 = 60\n"}
    sandbox.use_scenarios([_asking("raise setting six", "edit", args)])
    screen = _ask(sandbox, screens, "raise setting six")
    shown = screen.wait_for("ne[v]er")
    _keep("approval-edit", shown)
    block = shown[shown.index("config.py  +1 −1") :]
    assert block.splitlines()[:9] == [
        "config.py  +1 −1",
        "  @@ -4,7 +4,7 @@",
        "   setting_3 = 3",
        "   setting_4 = 4",
        "   setting_5 = 5",
        "  -setting_6 = 6",
        "  +setting_6 = 60",
        "   setting_7 = 7",
        "   setting_8 = 8",
    ], shown
    assert "[a]lways this session (edit)" in shown
    screen.keys("y")
    code, shown = screen.finish()
    assert code == 0, shown
    assert "setting_6 = 60" in (sandbox.project / "config.py").read_text()


def test_a_command_shows_itself_and_its_directory(sandbox: Sandbox, screens: list[Screen]) -> None:
    command = "make lint && pytest -q tests/unit"
    sandbox.use_scenarios([_asking("lint then test", "bash", {"command": command})])
    screen = _ask(sandbox, screens, "lint then test")
    shown = screen.wait_for("ne[v]er")
    _keep("approval-bash", shown)
    assert f"  $ {command}\n  in {sandbox.project}\n" in shown, shown
    assert "[a]lways this session (bash(make lint:*), bash(pytest:*))" in shown
    screen.keys("n")
    code, shown = screen.finish()
    assert code == 5, shown  # a refused call: the documented exit code
    assert "Permission denied: the user rejected this tool call." in shown


def test_always_says_it_lasts_this_session_and_project_keeps_it(
    sandbox: Sandbox, screens: list[Screen]
) -> None:
    """``[a]lways`` says it is for this session; ``p`` (always in this project) writes the
    rule to the user's config for the folder, so the next session there does not ask, while
    one in another folder still does."""
    command = "echo kept-for-the-project"
    sandbox.use_scenarios([_asking("echo for the project", "bash", {"command": command})])
    screen = _ask(sandbox, screens, "echo for the project")
    shown = screen.wait_for("ne[v]er")
    _keep("approval-project", shown)
    assert (
        "[y]es / [N]o / [a]lways this session (bash(echo:*)) / always in this [p]roject"
        " / ne[v]er this session" in shown
    ), shown
    screen.keys("p")
    code, shown = screen.finish()
    assert code == 0, shown
    assert "always in this project" in shown, shown
    config = (sandbox.config_dir / "agentd" / "config.toml").read_text()
    assert "[[project_rules]]" in config, config
    assert f'folder = "{sandbox.project}"' in config, config
    assert 'allow = ["bash(echo:*)"]' in config, config
    assert 'permission_mode = "auto"' in config  # what was there is kept

    again = _ask(sandbox, screens, "echo for the project")
    code, shown = again.finish()
    assert code == 0, shown
    assert "ne[v]er" not in shown, shown
    assert "● bash  echo kept-for-the-project" in shown, shown

    other = sandbox.project.parent / "elsewhere"
    other.mkdir()
    argv = [sys.executable, "-m", "agentctl", "send", "--stdio", "--provider", "mock"]
    elsewhere = Screen([*argv, "--permission", "ask", "echo for the project"], sandbox.env, other)
    screens.append(elsewhere)
    elsewhere.wait_for("ne[v]er")
    elsewhere.keys("n")
    code, _ = elsewhere.finish()
    assert code == 5
