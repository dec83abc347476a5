"""``agentctl send`` against the real daemon and the mock LLM: outputs and sessions."""

from __future__ import annotations

import json
import re

import pytest

from tests.agentctl.harness import Sandbox, event_types, json_lines

pytestmark = pytest.mark.e2e

MOCK = ("--provider", "mock")


def test_piped_output_is_the_answer_and_progress_goes_to_stderr(sandbox: Sandbox) -> None:
    """stdout is a pipe: it gets the final answer only; the footer goes to stderr; no colour
    codes or spinner frames anywhere."""
    result = sandbox.run("send", "--stdio", *MOCK, "how are you")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "I'm doing well, thank you for asking! What shall we work on?\n"
    lines = result.stderr.splitlines()
    assert lines[-1].startswith("── done · 1 turn · ")
    assert "session " in lines[-1]
    assert "\x1b[" not in result.stdout + result.stderr
    assert "\r" not in result.stdout + result.stderr


def test_tool_calls_render_as_compact_lines(sandbox: Sandbox) -> None:
    """hello world writes and runs a file: one line per tool call with its outcome and the
    command's duration, on stderr; stdout is only the final answer."""
    result = sandbox.run("send", "--stdio", *MOCK, "write a hello world program and run it")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done! hello.py prints 'Hello, World!'.\n"
    assert "● write  hello.py  created" in result.stderr
    assert re.search(r"● bash  python3 hello\.py  exit 0 · \d+\.\ds\n", result.stderr)
    assert "── done · 3 turns" in result.stderr
    assert "Hello, World" not in result.stderr  # the assistant's text is not progress


def test_json_output_contract(sandbox: Sandbox) -> None:
    """--json: a session line, every event in order, and a final result line."""
    result = sandbox.run("send", "--stdio", "--json", *MOCK, "hello world")
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stdout
    assert result.stdout.endswith("\n")
    lines = json_lines(result.stdout)
    session, events, final = lines[0], lines[1:-1], lines[-1]
    assert session["type"] == "session"
    assert session["provider"] == "mock"
    assert session["cwd"] == str(sandbox.project.resolve())
    session_id = session["sessionId"]
    assert all(line["sessionId"] == session_id for line in events)
    seqs = [line["seq"] for line in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    types = event_types(events)
    assert types[0] == "agent_start"
    assert types[-1] == "agent_end"
    assert types.count("tool_execution_end") == 2
    assert final["type"] == "result"
    assert final["stopReason"] == "end_turn"
    assert final["sessionId"] == session_id
    assert final["turns"] == 3
    assert final["exitCode"] == 0
    assert final["durationMs"] >= 0
    assert "usage" in final
    assert (sandbox.project / "hello.py").read_text() == "print('Hello, World!')\n"


def test_quiet_prints_only_the_final_text(sandbox: Sandbox) -> None:
    """--quiet: just the last assistant message's text."""
    result = sandbox.run("send", "--stdio", "--quiet", *MOCK, "hello world")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done! hello.py prints 'Hello, World!'.\n"


def test_piped_stdin_is_the_prompt(sandbox: Sandbox) -> None:
    """Without prompt words, all of stdin (several lines) is sent as one prompt."""
    result = sandbox.run("send", "--stdio", "--json", *MOCK, input="how are you?\nsecond line\n")
    assert result.returncode == 0, result.stderr
    users = [
        line["event"]["message"]
        for line in json_lines(result.stdout)
        if line.get("event", {}).get("type") == "message_end"
        and line["event"]["message"]["role"] == "user"
    ]
    assert users[0]["content"] == [{"type": "text", "text": "how are you?\nsecond line\n"}]


def test_autostart_continue_and_fork(sandbox: Sandbox) -> None:
    """The first send starts the shared daemon; --continue reuses the latest session of the
    directory on the same daemon; --fork starts a new session holding the old conversation."""
    first = sandbox.run("send", "--json", *MOCK, "how are you")
    assert first.returncode == 0, first.stderr
    session_id = json_lines(first.stdout)[0]["sessionId"]
    assert sandbox.socket.exists()
    pid = sandbox.daemon_pid()
    assert pid is not None

    again = sandbox.run("send", "--json", "--continue", "how are you")
    assert again.returncode == 0, again.stderr
    assert json_lines(again.stdout)[0]["sessionId"] == session_id
    assert sandbox.daemon_pid() == pid

    fork = sandbox.run("send", "--json", "--fork", session_id, "how are you")
    assert fork.returncode == 0, fork.stderr
    fork_id = json_lines(fork.stdout)[0]["sessionId"]
    assert fork_id != session_id

    shown = sandbox.run("sessions", "show", fork_id, "--json")
    assert shown.returncode == 0, shown.stderr
    roles = [message["role"] for message in json.loads(shown.stdout)]
    assert roles.count("user") == 3

    listing = sandbox.run("sessions", "list", "--json")
    ids = {item["sessionId"] for item in json.loads(listing.stdout)["sessions"]}
    assert {session_id, fork_id} <= ids


def test_explicit_session_and_model_switch(sandbox: Sandbox) -> None:
    """--session continues a given session; --title renames it."""
    first = sandbox.run("send", "--stdio", "--json", *MOCK, "how are you")
    session_id = json_lines(first.stdout)[0]["sessionId"]
    second = sandbox.run(
        "send", "--stdio", "--json", "--session", session_id, "--title", "renamed", "how are you"
    )
    assert second.returncode == 0, second.stderr
    head = json_lines(second.stdout)[0]
    assert head["sessionId"] == session_id
    listing = sandbox.run("sessions", "list", "--json", "--cwd", str(sandbox.project))
    titles = {s["sessionId"]: s.get("title") for s in json.loads(listing.stdout)["sessions"]}
    assert titles[session_id] == "renamed"


def test_continue_without_sessions_is_a_usage_error(sandbox: Sandbox) -> None:
    """--continue in a directory with no session exits 2 with a message."""
    result = sandbox.run("send", "--stdio", "--continue", "hi")
    assert result.returncode == 2
    assert "no session to continue" in result.stderr


def test_edit_line_shows_added_and_removed_lines(sandbox: Sandbox) -> None:
    """An edit's tool line carries its added and removed line counts from the tool's details."""
    sandbox.use_test_scenarios()
    result = sandbox.run("send", "--stdio", *MOCK, "edit the notes")
    assert result.returncode == 0, result.stderr
    assert "● write  notes.txt  created" in result.stderr
    assert "● edit  notes.txt  (+2 −1)" in result.stderr
    assert (sandbox.project / "notes.txt").read_text() == "one\n2\nthree\n"
