"""``agentctl rewind`` against a real shared daemon: the readable report, ``--json``, the
latest session of the directory by default, a conflict that stops the rewind (exit 9, nothing
moved) until ``--force`` rewinds the same prompt."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator

import pytest

from tests.agentctl.harness import Sandbox, json_lines, read_until
from tests.harness import scaled
from tests.rewind.scenarios import KEEP_BEFORE, SCENARIOS

pytestmark = pytest.mark.e2e


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox()
    box.use_scenarios(SCENARIOS)
    try:
        yield box
    finally:
        box.close()


def _send(sandbox: Sandbox, *args: str) -> str:
    result = sandbox.run("send", "--json", "--provider", "mock", *args)
    assert result.returncode == 0, result.stderr
    return str(json_lines(result.stdout)[0]["sessionId"])


def test_rewind_prints_what_it_restored(sandbox: Sandbox) -> None:
    project = sandbox.project
    (project / "keep.txt").write_text(KEEP_BEFORE)
    sid = _send(sandbox, "rewind turn one")
    _send(sandbox, "--session", sid, "rewind turn two")
    (project / "a.txt").write_text("edited by hand\n")

    preview = sandbox.run("rewind", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    assert preview.stdout.splitlines() == [
        f"would rewind {sid} to before: rewind turn two",
        "  conflict  a.txt: changed since agentd left it; a forced rewind overwrites it",
        "  restore  keep.txt",
        "  remove   sub/deep.txt",
        "conflicts stop a rewind (nothing is changed) unless --force",
    ]
    assert (project / "sub/deep.txt").exists()

    stopped = sandbox.run("rewind")  # the latest session of the directory; not a terminal
    assert stopped.returncode == 9, stopped.stderr
    lines = stopped.stdout.splitlines()
    assert lines[0] == f"not rewound: {sid} to before: rewind turn two meets conflicts"
    assert lines[1].startswith("  conflict  a.txt: changed since agentd left it")
    assert "  restore  keep.txt" in lines
    assert "  remove   sub/deep.txt" in lines
    assert lines[-1].startswith("nothing was changed; --force rewinds to before the same prompt")
    assert (project / "a.txt").read_text() == "edited by hand\n"
    assert (project / "sub/deep.txt").exists()  # nothing moved

    as_json = sandbox.run("rewind", "--json")
    assert as_json.returncode == 9, as_json.stderr
    assert json.loads(as_json.stdout)["applied"] is False

    forced = sandbox.run("rewind", sid[:8], "--force", "--json")  # the same prompt
    assert forced.returncode == 0, forced.stderr
    result = json.loads(forced.stdout)
    assert result["applied"] is True
    assert result["prompt"] == "rewind turn two"
    assert str(project / "a.txt") in result["restored"]
    assert result["conflicts"] == []
    assert (project / "keep.txt").read_text() == "kept line\n"
    assert (project / "a.txt").read_text() == "one\n"
    assert not (project / "sub/deep.txt").exists()


def test_rewind_errors_are_readable(sandbox: Sandbox) -> None:
    """No session in the directory, or more turns than prompts: exit 2 with the reason."""
    empty = sandbox.run("rewind")
    assert empty.returncode == 2
    assert "no session to rewind in" in empty.stderr
    sid = _send(sandbox, "rewind turn one")
    too_far = sandbox.run("rewind", sid, "--turns", "3")
    assert too_far.returncode == 2, too_far.stderr
    assert "the current branch has 1 user prompts" in too_far.stderr
    assert "Traceback" not in too_far.stderr


def test_attach_says_when_another_client_rewinds(sandbox: Sandbox) -> None:
    """A terminal following the session cannot take back what it printed: it prints a line
    naming the prompt the session went back before."""
    sid = _send(sandbox, "rewind turn one")
    _send(sandbox, "--session", sid, "rewind turn two")
    attach = sandbox.popen_bytes("attach", sid)
    read_until(attach, "stderr", "is idle; waiting for its next run")
    rewound = sandbox.run("rewind", sid, "--no-files")
    assert rewound.returncode == 0, rewound.stderr
    shown = read_until(attach, "stdout", "(what is above from there on was discarded)")
    assert "↶ session rewound to before: rewind turn two" in shown
    attach.send_signal(signal.SIGINT)
    attach.communicate(timeout=scaled(20))
    assert attach.returncode == 130
