"""What a person sees: a spinner while the model thinks (and a retry's countdown) on a real
pseudo-terminal, failed calls marked ✗ with or without colour, tool durations, and a pipe that
gets the answer on stdout while progress goes to stderr. Real daemon, mock LLM."""

from __future__ import annotations

import re
import sys

import pexpect
import pytest

from tests.agentctl.harness import Sandbox, json_lines
from tests.harness import scaled

pytestmark = pytest.mark.e2e

MOCK = ("--provider", "mock")


def spawn_send(sandbox: Sandbox, *args: str, no_color: bool = False) -> pexpect.spawn:
    env = dict(sandbox.env, TERM="xterm")
    if no_color:
        env["NO_COLOR"] = "1"
    return pexpect.spawn(
        sys.executable,
        ["-m", "agentctl", "send", "--stdio", *MOCK, *args],
        cwd=str(sandbox.project),
        env=env,
        encoding="utf-8",
        timeout=scaled(30),
        dimensions=(40, 200),
    )


def test_a_spinner_runs_from_the_prompt_to_the_first_token(sandbox: Sandbox) -> None:
    """The model takes 2.5 s to answer: the terminal shows a spinner with the elapsed time
    meanwhile, and it is erased when the text arrives."""
    sandbox.use_test_scenarios()
    child = spawn_send(sandbox, "think slowly")
    child.expect_exact("thinking…")
    child.expect(r"thinking…\S*\s+\S*1\.\ds")  # the elapsed time counts up
    child.expect_exact("slow")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_retry_shows_its_countdown(sandbox: Sandbox) -> None:
    """A 429 with Retry-After 2 s: a retry line, then a spinner counting down to the retry."""
    sandbox.use_test_scenarios()
    child = spawn_send(sandbox, "rate limited")
    child.expect(r"retry 1/\d+ in 2\.0s")
    child.expect(r"retrying in [12] s \(429\)")
    child.expect_exact("Answer after the retry.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_failed_command_is_marked_without_colour_too(sandbox: Sandbox) -> None:
    """A command that exits 3 gets ✗ (not the ● of a good call), in red on a colour terminal
    and as the same mark with NO_COLOR."""
    sandbox.use_test_scenarios()
    child = spawn_send(sandbox, "run the failing command", no_color=True)
    child.expect(pexpect.EOF)
    child.close()
    plain = str(child.before)
    assert re.search(r"✗ bash  echo broken; exit 3  exit 3 · \d+\.\ds", plain)
    assert "● bash" not in plain
    assert "\x1b[" not in plain
    child = spawn_send(sandbox, "run the failing command")
    child.expect(pexpect.EOF)
    child.close()
    assert "\x1b[31m✗\x1b[0m" in str(child.before)


def test_piped_stdout_gets_the_answer_and_stderr_the_progress(sandbox: Sandbox) -> None:
    """`agentctl send … | cat`: stdout is the final answer only (as for a script); tool lines
    and the footer go to stderr; --quiet leaves stderr empty on success."""
    result = sandbox.run("send", "--stdio", *MOCK, "hello world")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done! hello.py prints 'Hello, World!'.\n"
    assert "● write  hello.py  created" in result.stderr
    assert "── done · 3 turns" in result.stderr
    quiet = sandbox.run("send", "--stdio", "-q", *MOCK, "hello world")
    assert quiet.returncode == 0
    assert quiet.stdout == "Done! hello.py prints 'Hello, World!'.\n"
    assert quiet.stderr == ""


def test_markdown_is_rendered_on_a_terminal_and_left_alone_in_pipes(sandbox: Sandbox) -> None:
    """`A **slow** answer` and a fenced block: bold and no fences on a colour terminal; with
    NO_COLOR (plain text wanted) and in a pipe, the Markdown as written."""
    sandbox.use_test_scenarios()
    child = spawn_send(sandbox, "think slowly")
    child.expect(pexpect.EOF)
    child.close()
    coloured = str(child.before)
    assert "\x1b[1mslow\x1b[0m" in coloured
    assert "```" not in coloured
    assert "print" in coloured
    child = spawn_send(sandbox, "think slowly", no_color=True)
    child.expect(pexpect.EOF)
    child.close()
    plain = str(child.before)
    assert "A **slow** answer:" in plain
    assert "\x1b[" not in plain
    piped = sandbox.run("send", "--stdio", *MOCK, "think slowly")
    assert piped.stdout == "A **slow** answer:\n\n```python\nprint('hi')\n```\n"


def test_the_html_export_renders_markdown_and_is_titled_by_the_prompt(sandbox: Sandbox) -> None:
    """sessions export --format html against the daemon: Markdown rendered, the first prompt
    as the page title, no leading "Model changed" entry."""
    sandbox.use_test_scenarios()
    sent = sandbox.run("send", "--json", *MOCK, "think slowly")
    session_id = json_lines(sent.stdout)[0]["sessionId"]
    page = sandbox.run("sessions", "export", session_id[:8], "--format", "html").stdout
    assert "<title>think slowly</title>" in page
    assert "<strong>slow</strong>" in page
    assert '<code class="language-python">' in page
    assert "Model changed" not in page
