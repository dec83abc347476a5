"""``agentctl rewind`` meeting a conflict on a real terminal (tmux: what a person sees): the
conflict is shown with what the rewind would do, one key answers; ``n`` moves nothing and
exits 9, ``y`` rewinds the same prompt anyway."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agentctl.harness import Sandbox, json_lines
from tests.agentctl.screen import Screen
from tests.rewind.scenarios import KEEP_BEFORE, SCENARIOS

pytestmark = pytest.mark.e2e
CAPTURES = Path(__file__).resolve().parents[2] / "test-artifacts" / "agentctl"
QUESTION = "Rewind anyway (changed files are overwritten)? [y/N]"


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox()
    box.use_scenarios(SCENARIOS)
    try:
        yield box
    finally:
        box.close()


def _two_turns_and_a_hand_edit(sandbox: Sandbox) -> str:
    (sandbox.project / "keep.txt").write_text(KEEP_BEFORE)
    sid = ""
    for text in ("rewind turn one", "rewind turn two"):
        extra = ["--session", sid] if sid else []
        done = sandbox.run("send", "--json", "--provider", "mock", *extra, text)
        assert done.returncode == 0, done.stderr
        sid = str(json_lines(done.stdout)[0]["sessionId"])
    (sandbox.project / "a.txt").write_text("edited by hand\n")
    return sid


def _rewind_on_a_terminal(sandbox: Sandbox) -> Screen:
    argv = [sys.executable, "-m", "agentctl", "rewind"]
    return Screen(argv, sandbox.env, sandbox.project)


def _messages(sandbox: Sandbox, sid: str) -> int:
    shown = sandbox.run("sessions", "show", sid, "--json")
    assert shown.returncode == 0, shown.stderr
    return len(json.loads(shown.stdout))


def test_no_moves_nothing_and_exits_9(sandbox: Sandbox) -> None:
    project = sandbox.project
    sid = _two_turns_and_a_hand_edit(sandbox)
    before = _messages(sandbox, sid)
    screen = _rewind_on_a_terminal(sandbox)
    try:
        shown = screen.wait_for(QUESTION)
        CAPTURES.mkdir(parents=True, exist_ok=True)
        (CAPTURES / "rewind-conflict.txt").write_text(shown + "\n")
        assert f"not rewound: {sid} to before: rewind turn two meets conflicts" in shown
        assert (
            "  conflict  a.txt: changed since agentd left it; a forced rewind overwrites it"
            in shown
        )
        assert "  restore  keep.txt" in shown
        assert "  remove   sub/deep.txt" in shown
        screen.keys("n")
        code, shown = screen.finish()
    finally:
        screen.close()
    assert code == 9, shown
    assert shown.rstrip().endswith(f"{QUESTION} no: nothing was rewound")
    assert (project / "a.txt").read_text() == "edited by hand\n"
    assert (project / "sub" / "deep.txt").exists()
    assert _messages(sandbox, sid) == before


def test_yes_rewinds_the_same_prompt_anyway(sandbox: Sandbox) -> None:
    project = sandbox.project
    sid = _two_turns_and_a_hand_edit(sandbox)
    screen = _rewind_on_a_terminal(sandbox)
    try:
        screen.wait_for(QUESTION)
        screen.keys("y")
        code, shown = screen.finish()
    finally:
        screen.close()
    assert code == 0, shown
    CAPTURES.mkdir(parents=True, exist_ok=True)
    (CAPTURES / "rewind-conflict-forced.txt").write_text(shown + "\n")
    assert f"{QUESTION} yes" in shown
    assert f"rewound {sid} to before: rewind turn two" in shown
    assert "  restored  a.txt" in shown
    assert (project / "a.txt").read_text() == "one\n"  # turn one's, not removed
    assert (project / "keep.txt").read_text() == "kept line\n"
    assert not (project / "sub" / "deep.txt").exists()
