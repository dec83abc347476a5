"""agentctl on a real pseudo-terminal (pexpect): chat, colours and spinners, permission prompts."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pexpect
import pytest

from tests.agentctl.harness import Sandbox
from tests.harness import scaled

pytestmark = pytest.mark.e2e

PROMPT = "› "


def spawn_chat(sandbox: Sandbox, *args: str) -> pexpect.spawn:
    env = dict(sandbox.env, NO_COLOR="1", TERM="xterm")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agentctl", "chat", "--stdio", "--provider", "mock", *args],
        cwd=str(sandbox.project),
        env=env,
        encoding="utf-8",
        timeout=scaled(30),
        dimensions=(40, 200),
    )
    child.expect("/help for commands")
    child.expect_exact(PROMPT)
    return child


def test_chat_turns_commands_and_shell(sandbox: Sandbox) -> None:
    """Prompts get replies; empty lines are ignored; !cmd runs in the shell; /exit leaves."""
    child = spawn_chat(sandbox)
    child.sendline("")
    child.expect_exact(PROMPT)
    child.sendline("hello world")
    child.expect("bash  python3 hello.py")
    child.expect("── done · 3 turns")
    child.expect_exact(PROMPT)
    child.sendline("!cat hello.py")
    child.expect_exact("print('Hello, World!')")
    child.expect("exit 0; recorded in the session for the model")
    child.expect_exact(PROMPT)
    child.sendline("/sessions")
    child.expect("ENTRIES")
    child.expect_exact(PROMPT)
    child.sendline("/model other-model")
    child.expect("model: mock/other-model")
    child.expect_exact(PROMPT)
    child.sendline("/bogus")
    child.expect("unknown command /bogus")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    history = Path(sandbox.env["XDG_STATE_HOME"]) / "agentd" / "chat_history"
    assert "hello world" in history.read_text()


def test_chat_shell_command_is_recorded_without_a_prompt(sandbox: Sandbox) -> None:
    """!command and its output are in the session at once, even if no prompt follows; they
    come before the next prompt in the conversation; /clear starts a new session."""
    child = spawn_chat(sandbox)
    listing = json.loads(sandbox.run("sessions", "list", "--json").stdout)
    (session_id,) = [item["sessionId"] for item in listing["sessions"]]
    child.sendline("!echo marker-42")
    child.expect("recorded in the session")
    child.expect_exact(PROMPT)
    child.sendline("/clear")
    child.expect(r"session (\S+) · mock/")
    cleared_id = child.match.group(1)
    assert cleared_id != session_id
    child.expect_exact(PROMPT)
    child.sendline("!echo marker-43")
    child.expect_exact(PROMPT)
    child.sendline("how are you")
    child.expect("── done")
    child.expect_exact(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    shown = sandbox.run("sessions", "show", session_id)
    assert "$ echo marker-42" in shown.stdout
    messages = json.loads(sandbox.run("sessions", "show", cleared_id, "--json").stdout)
    texts = [m["content"][0]["text"] for m in messages if m["role"] == "user"]
    assert "marker-43" in texts[0]
    assert texts[1] == "how are you"


def test_ctrl_c_cancels_a_turn_then_exits_when_idle(sandbox: Sandbox) -> None:
    """Ctrl-C during a turn cancels it and returns to the prompt; Ctrl-C when idle leaves."""
    child = spawn_chat(sandbox)
    child.sendline("be slow")
    child.expect("This reply")
    child.sendintr()
    child.expect("interrupted")
    child.expect_exact(PROMPT)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 or child.signalstatus == signal.SIGINT


def test_send_asks_at_the_terminal_in_ask_mode(sandbox: Sandbox) -> None:
    """--permission ask on a terminal: y allows the write, n refuses the bash run (exit 5)."""
    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "agentctl",
            "send",
            "--stdio",
            "--provider",
            "mock",
            "--permission",
            "ask",
            "hello world",
        ],
        cwd=str(sandbox.project),
        env=dict(sandbox.env, NO_COLOR="1", TERM="xterm"),
        encoding="utf-8",
        timeout=scaled(30),
        dimensions=(40, 200),
    )
    child.expect_exact("+print('Hello, World!')")  # the new file, before the question
    child.expect_exact(
        "? allow write  hello.py  [y]es / [N]o / [a]lways this session (write) / "
        "always in this [p]roject / ne[v]er this session"
    )
    child.send("y")  # one key, no Enter
    child.expect_exact("yes")
    child.expect("write  hello.py  created")
    child.expect_exact("? allow bash  python3 hello.py")
    child.send("\r")  # Enter: the default, no
    child.expect("permission refused")
    child.expect("── refused")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 5
    assert (sandbox.project / "hello.py").exists()


def run_on_tty(sandbox: Sandbox, env: dict[str, str]) -> str:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agentctl", "send", "--stdio", "--provider", "mock", "hello world"],
        cwd=str(sandbox.project),
        env=env,
        encoding="utf-8",
        timeout=scaled(30),
        dimensions=(40, 200),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    return str(child.before)


def test_terminal_output_has_colour_and_spinner(sandbox: Sandbox) -> None:
    """On a terminal tool lines are coloured and drawn in place; NO_COLOR turns both off."""
    coloured = run_on_tty(sandbox, dict(sandbox.env, TERM="xterm"))
    assert "\x1b[32m●\x1b[0m" in coloured  # green bullet of a successful call
    assert "\r\x1b[2K" in coloured  # the spinner line is redrawn
    plain = run_on_tty(sandbox, dict(sandbox.env, TERM="xterm", NO_COLOR="1"))
    assert "\x1b[" not in plain
    assert "● bash  python3 hello.py  exit 0" in plain


def test_chat_lists_models_switches_sessions_and_leaves_no_empty_session(
    sandbox: Sandbox,
) -> None:
    """/model alone lists the models (the current one marked); /sessions ID switches (a
    prefix will do); a chat in which nothing was said leaves no session behind."""
    earlier = json.loads(
        sandbox.run("send", "--stdio", "--json", "--provider", "mock", "hi").stdout.split("\n")[0]
    )
    earlier_id = earlier["sessionId"]
    child = spawn_chat(sandbox)
    child.sendline("/model")
    child.expect_exact("● mock mock-model")
    child.expect_exact(PROMPT)
    child.sendline(f"/sessions {earlier_id[:6]}")
    child.expect_exact(f"session {earlier_id} · mock/")
    child.expect_exact(PROMPT)
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    listing = json.loads(sandbox.run("sessions", "list", "--json").stdout)
    assert [item["sessionId"] for item in listing["sessions"]] == [earlier_id]
