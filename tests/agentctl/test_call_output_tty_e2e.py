"""What a command printed shows under its call on a real terminal (tmux): the last lines of a
failed command's output (stderr included) always, every call's with ``--verbose``, in a ``⎿``
block; ``sessions show`` marks the failed call ``✗`` and shows the same block. Output stays
escaped: a control sequence in it is written out, not obeyed. Real daemon, mock LLM, bash."""

from __future__ import annotations

import re
import sys

import pytest

from tests.agentctl.harness import Sandbox
from tests.agentctl.screen import Screen
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

FAILING = (
    "for i in 1 2 3 4 5 6 7 8 9; do echo line-$i; done; "
    "printf 'title\\033]2;PWNED\\007\\n'; echo 'fatal: no such thing' >&2; exit 3"
)
GOOD = "echo good-output-1; echo good-output-2"


def _scenarios(sandbox: Sandbox) -> None:
    steps = [
        {
            "response": {
                "content": "Running them.",
                "tool_calls": [
                    tool_call("bash", {"command": GOOD}, "call_g"),
                    tool_call("bash", {"command": FAILING}, "call_f"),
                ],
            }
        },
        {"response": {"content": "The second command failed."}},
    ]
    sandbox.use_scenarios([{"name": "outputs", "trigger": "run both", "steps": steps}])


def _send(sandbox: Sandbox, *flags: str) -> tuple[int, str]:
    argv = [sys.executable, "-m", "agentctl", "send", "--stdio", "--provider", "mock", *flags]
    screen = Screen([*argv, "run both"], sandbox.env, sandbox.project)
    try:
        return screen.finish()
    finally:
        screen.close()


def _block_under(text: str, call: str) -> list[str]:
    """The indented lines right under the line that contains ``call``."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if call in line)
    block = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        block.append(line)
    return block


def test_a_failed_command_shows_its_last_lines_and_stderr(sandbox: Sandbox) -> None:
    _scenarios(sandbox)
    code, shown = _send(sandbox)
    assert code == 0, shown
    assert re.search(r"✗ bash  for i in .* exit 3 · \d+\.\ds", shown), shown
    block = _block_under(shown, "✗ bash")
    assert block[0] == "  ⎿  … 5 lines above", shown
    assert block[1:] == [
        "     line-6",
        "     line-7",
        "     line-8",
        "     line-9",
        "     title\\x1b]2;PWNED\\x07",
        "     fatal: no such thing",
    ], shown
    assert "Exit code 3" not in shown
    # the good call gets its one line only
    assert _block_under(shown, "● bash  echo good-output-1") == []
    assert "⎿  good-output-1" not in shown


def test_verbose_shows_every_calls_output(sandbox: Sandbox) -> None:
    _scenarios(sandbox)
    code, shown = _send(sandbox, "--verbose")
    assert code == 0, shown
    assert _block_under(shown, "● bash  echo good-output-1") == [
        "  ⎿  good-output-1",
        "     good-output-2",
    ], shown
    assert _block_under(shown, "✗ bash")[-1] == "     fatal: no such thing"


def test_sessions_show_marks_the_failed_call_and_its_output(sandbox: Sandbox) -> None:
    _scenarios(sandbox)
    code, shown = _send(sandbox)
    assert code == 0, shown
    listed = sandbox.run("sessions", "list", "--json")
    session_id = listed.stdout.split('"sessionId":"', 1)[1].split('"', 1)[0]
    argv = [sys.executable, "-m", "agentctl", "sessions", "show", session_id]
    for flags, good_block in (
        ((), []),
        (("--verbose",), ["  ⎿  good-output-1", "     good-output-2"]),
    ):
        screen = Screen([*argv, *flags], sandbox.env, sandbox.project)
        try:
            code, text = screen.finish()
            assert "PWNED" not in screen.title()
        finally:
            screen.close()
        assert code == 0, text
        assert "● bash  echo good-output-1" in text, text
        assert _block_under(text, "● bash  echo good-output-1") == good_block, text
        assert "✗ bash  for i in" in text, text
        assert "● bash  for i in" not in text, text
        assert _block_under(text, "✗ bash")[-2:] == [
            "     title\\x1b]2;PWNED\\x07",
            "     fatal: no such thing",
        ], text
