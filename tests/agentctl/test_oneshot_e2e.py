"""Where ``agentctl send`` runs its session: in its own process when no shared daemon answers.

The real ``agentctl`` (the tests' ``AGENTCTL_SHARED=1`` dropped, so a plain ``send`` does what a
user's does) against the mock LLM:

* with no daemon running, ``send`` runs the session in its own process and starts nothing; its
  ``--json`` lines, exit code and session file are those of a private daemon process
  (``--daemon-process``) for the same run, a tool call refused for want of a terminal;
* a shared daemon that runs is used (the session is its, loaded there);
* on a terminal, the in-process run asks before a tool call and takes one key (pexpect).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

import pexpect
import pytest

from tests.agentctl.harness import Sandbox
from tests.harness import scaled
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

_ID = re.compile(r"\b[0-9a-f]{8}(?:[0-9a-f]{8})?\b")  # session, message and entry ids
_VARYING = frozenset({"timestamp", "durationMs", "createdAt", "updatedAt", "path", "sessionFile"})


@pytest.fixture
def box(sandbox: Sandbox) -> Sandbox:
    """The sandbox with ``send``'s user default: no shared daemon started for it."""
    sandbox.env.pop("AGENTCTL_SHARED", None)
    return sandbox


def _normalised(lines: list[str]) -> list[Any]:
    """JSON lines with what differs from run to run replaced: ids (numbered in the order they
    appear), times, durations, file paths."""
    ids: dict[str, str] = {}

    def same(value: Any, key: str = "") -> Any:
        if key in _VARYING:
            return "…"
        if isinstance(value, dict):
            return {k: same(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [same(v) for v in value]
        if isinstance(value, str):
            return _ID.sub(lambda m: ids.setdefault(m.group(0), f"<id{len(ids)}>"), value)
        return value

    return [same(json.loads(line)) for line in lines if line.strip()]


def _daemon_lines(box: Sandbox) -> list[str]:
    """The daemon log's lines that only a daemon process writes (a client connecting)."""
    log = box.state_dir / "agentd" / "agentd.log"
    text = log.read_text() if log.exists() else ""
    return [line for line in text.splitlines() if "client connected" in line]


def _refused_run(box: Sandbox, *flags: str) -> tuple[int, list[str], list[str]]:
    """``send --json`` of the mock's write-then-run scenario in ask mode with no terminal: the
    write is refused (exit 5). Its exit code, JSON lines and session file's lines."""
    before = set(box.sessions.rglob("*.jsonl"))
    argv = ("send", *flags, "--provider", "mock", "--permission", "ask", "--json", "hello world")
    result = box.run(*argv)
    (session_file,) = set(box.sessions.rglob("*.jsonl")) - before
    return result.returncode, result.stdout.splitlines(), session_file.read_text().splitlines()


def test_in_process_run_matches_a_daemon_process_run(box: Sandbox) -> None:
    code, lines, stored = _refused_run(box)
    assert not box.socket.exists()  # nothing was started …
    assert _daemon_lines(box) == []  # … and no daemon process served it
    daemon_code, daemon_lines, daemon_stored = _refused_run(box, "--daemon-process")
    assert len(_daemon_lines(box)) == 1  # a private daemon process did
    assert (code, daemon_code) == (5, 5)
    assert _normalised(lines) == _normalised(daemon_lines)
    assert _normalised(stored) == _normalised(daemon_stored)
    result = json.loads(lines[-1])
    assert result["stopReason"] == "end_turn" or result["permissionsRefused"], result
    assert not (box.project / "hello.py").exists()


def test_stdio_runs_in_process_even_when_a_shared_daemon_runs(box: Sandbox) -> None:
    assert box.run("daemon", "start").returncode == 0
    result = box.run("send", "--stdio", "--provider", "mock", "--json", "how are you")
    assert result.returncode == 0, result.stderr
    session_id = json.loads(result.stdout.splitlines()[0])["sessionId"]
    status = json.loads(box.run("rpc", "daemon/status").stdout)
    assert session_id not in status["sessions"]


def test_a_running_shared_daemon_is_used(box: Sandbox) -> None:
    assert box.run("daemon", "start").returncode == 0
    result = box.run("send", "--provider", "mock", "--json", "how are you")
    assert result.returncode == 0, result.stderr
    session_id = json.loads(result.stdout.splitlines()[0])["sessionId"]
    status = json.loads(box.run("rpc", "daemon/status").stdout)
    assert session_id in status["sessions"]


def test_shared_starts_the_shared_daemon(box: Sandbox) -> None:
    result = box.run("send", "--shared", "--provider", "mock", "how are you")
    assert result.returncode == 0, result.stderr
    assert box.socket.exists()
    assert box.run("status").returncode == 0


@pytest.mark.parametrize("flags", [[], ["--daemon-process"]], ids=["in-process", "daemon"])
def test_a_terminal_approves_the_in_process_run(box: Sandbox, flags: list[str]) -> None:
    """``y`` allows the write, Enter (no) refuses the bash run: exit 5, the file written."""
    argv = ["-m", "agentctl", "send", *flags, "--provider", "mock", "--permission", "ask"]
    child = pexpect.spawn(
        sys.executable,
        [*argv, "hello world"],
        cwd=str(box.project),
        env=dict(box.env, NO_COLOR="1", TERM="xterm"),
        encoding="utf-8",
        timeout=scaled(30),
        dimensions=(40, 200),
    )
    child.expect_exact("+print('Hello, World!')")
    child.expect_exact("? allow write  hello.py  [y]es / [N]o")
    child.send("y")
    child.expect("write  hello.py  created")
    child.expect_exact("? allow bash  python3 hello.py")
    child.send("\r")
    child.expect("── refused")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 5
    assert (box.project / "hello.py").read_text() == "print('Hello, World!')\n"
    assert not box.socket.exists()


def test_the_in_process_bash_gets_no_provider_key(box: Sandbox) -> None:
    """agentctl's own environment holds the key; the commands the in-process session runs do
    not get it (as from a daemon), and the process is not dumpable by them."""
    call = tool_call("bash", {"command": "env; cat /proc/$PPID/environ 2>&1 | head -c 200"})
    steps = [{"response": {"content": "Looking.", "tool_calls": [call]}}, {"response": {}}]
    box.use_scenarios([{"name": "env", "trigger": "show the env", "steps": steps}])
    secret = "sk-test-" + "k" * 32
    env = dict(box.env, OPENAI_API_KEY=secret)
    result = subprocess.run(
        [sys.executable, "-m", "agentctl", "send", "--provider", "mock", "--json", "show the env"],
        cwd=box.project, env=env, capture_output=True, text=True, timeout=scaled(60),
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    ends = [json.loads(line)["event"] for line in result.stdout.splitlines()[1:-1]]
    (output,) = [e["result"][0]["text"] for e in ends if e["type"] == "tool_execution_end"]
    assert "PATH=" in output
    assert "k" * 32 not in output
    assert "OPENAI_API_KEY" not in output


def test_in_process_runs_continue_each_other(box: Sandbox) -> None:
    """The session file an in-process run leaves is found by the next (``--continue``, a short
    ``--session`` prefix) and by ``sessions list``, as a daemon's would be."""
    first = box.run("send", "--provider", "mock", "--json", "how are you")
    session_id = json.loads(first.stdout.splitlines()[0])["sessionId"]
    again = box.run("send", "--continue", "--json", "how are you")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.splitlines()[0])["sessionId"] == session_id
    third = box.run("send", "--session", session_id[:6], "--json", "how are you")
    assert json.loads(third.stdout.splitlines()[0])["sessionId"] == session_id
    assert not box.socket.exists()
    listing = json.loads(box.run("sessions", "list", "--json").stdout)
    assert [item["sessionId"] for item in listing["sessions"]] == [session_id]
