"""The agent's questions at the terminal (tmux: what a person sees and types) and on a pipe.

``agentctl send`` in a real terminal, a real daemon and the mock LLM: a single-choice question
is answered by one key, a multi-select one by toggling with keys and Space and confirming with
Enter, "Other" by a typed line; piped, nobody is asked and the tool answers at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agentctl.harness import Sandbox
from tests.agentctl.screen import Screen
from tests.harness import scaled
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e
CAPTURES = Path(__file__).resolve().parents[2] / "test-artifacts" / "agentctl"

QUESTIONS = [
    {
        "question": "Which database should the service use?",
        "header": "Database",
        "options": [
            {"label": "Postgres", "description": "a server"},
            {"label": "SQLite", "description": "a file"},
        ],
    },
    {
        "question": "Which features go in the first release?",
        "header": "Features",
        "options": [{"label": "Auth"}, {"label": "Search"}, {"label": "Export"}],
        "multi_select": True,
    },
]


def _scenario(trigger: str, questions: list[dict[str, Any]]) -> dict[str, Any]:
    call = tool_call("ask_user", {"questions": questions}, "ask_1")
    return {
        "name": trigger,
        "trigger": trigger,
        "steps": [
            {"response": {"content": "One question first.", "tool_calls": [call]}},
            {"response": {"content": "Thanks, noted."}},
        ],
    }


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    opened: list[Screen] = []
    yield opened
    for screen in opened:
        screen.close()


def _send(sandbox: Sandbox, screens: list[Screen], prompt: str) -> Screen:
    argv = [sys.executable, "-m", "agentctl", "send", "--stdio", "--provider", "mock", prompt]
    screen = Screen(argv, sandbox.env, sandbox.project)
    screens.append(screen)
    return screen


def _tool_result_text(sandbox: Sandbox) -> str:
    sessions = Path(sandbox.env["XDG_DATA_HOME"]) / "agentd" / "sessions"
    [path] = list(sessions.rglob("*.jsonl"))
    for line in path.read_text().splitlines():
        message = json.loads(line).get("message", {})
        if message.get("role") == "tool_result":
            return "".join(block.get("text", "") for block in message["content"])
    raise AssertionError(f"no tool result in {path}")


def test_keys_answer_a_single_and_a_multi_select_question(
    sandbox: Sandbox, screens: list[Screen]
) -> None:
    sandbox.use_scenarios([_scenario("plan the service", QUESTIONS)])
    screen = _send(sandbox, screens, "plan the service")
    shown = screen.wait_for("o to write your own answer")
    assert "? Database  Which database should the service use? (1/2)" in shown
    assert "  1 Postgres — a server" in shown
    assert "  2 SQLite — a file" in shown
    screen.keys("2")
    shown = screen.wait_for("Enter confirms")
    assert "› SQLite" in shown
    screen.keys("1", "j", "j", "Space")  # key 1 ticks Auth; the cursor moves to Export
    shown = screen.wait_for("[x] Export")
    CAPTURES.mkdir(parents=True, exist_ok=True)
    (CAPTURES / "question-multi.txt").write_text(shown + "\n")
    assert "[x] Auth" in shown
    assert "[ ] Search" in shown
    screen.keys("Enter")
    code, shown = screen.finish()
    assert code == 0, shown
    assert "Thanks, noted." in shown
    assert _tool_result_text(sandbox) == (
        "The user answered:\n"
        '"Which database should the service use?" = SQLite\n'
        '"Which features go in the first release?" = Auth, Export'
    )


def test_other_takes_a_typed_line(sandbox: Sandbox, screens: list[Screen]) -> None:
    sandbox.use_scenarios([_scenario("pick a database", QUESTIONS[:1])])
    screen = _send(sandbox, screens, "pick a database")
    screen.wait_for("o to write your own answer")
    screen.keys("o")
    screen.wait_for("your answer:")
    screen.keys("DuckDB please", "Enter")
    code, shown = screen.finish()
    assert code == 0, shown
    assert _tool_result_text(sandbox).endswith("= Other: DuckDB please")


def test_piped_nobody_is_asked(sandbox: Sandbox) -> None:
    """No terminal: the capability is not declared, the tool answers at once and the run
    goes on (the question is reported as not answered)."""
    sandbox.use_scenarios([_scenario("plan the service", QUESTIONS)])
    done = subprocess.run(
        [sys.executable, "-m", "agentctl", "send", "--stdio", "--provider", "mock",
         "plan the service"],
        env=sandbox.env, cwd=sandbox.project, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=scaled(60), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "? question not answered: no user can answer" in done.stdout + done.stderr
    assert _tool_result_text(sandbox).startswith("No answer from the user: no user can answer")
