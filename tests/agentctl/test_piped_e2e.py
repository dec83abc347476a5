"""``agentctl send`` with words and a piped stdin (the instruction plus the input, capped,
with a note), and an unknown ``/command`` that leaves no session behind: the real client,
a real ``--stdio`` or shared daemon and the mock LLM, over real pipes."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentctl.prompt.piped import STDIN_CAP, read_prompt
from tests.agentctl.harness import Sandbox, json_lines

MOCK = ("--provider", "mock")
DIFF = "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def user_texts(stdout: str) -> list[str]:
    """The text of every user message the run recorded (its ``message_end`` events)."""
    return [
        "".join(block["text"] for block in line["event"]["message"]["content"])
        for line in json_lines(stdout)
        if line.get("event", {}).get("type") == "message_end"
        and line["event"]["message"]["role"] == "user"
    ]


def session_files(sandbox: Sandbox) -> list[Path]:
    return list(Path(sandbox.env["XDG_DATA_HOME"]).rglob("*.jsonl"))


@pytest.mark.e2e
def test_words_plus_piped_stdin_send_the_instruction_and_the_input(sandbox: Sandbox) -> None:
    result = sandbox.run("send", "--stdio", "--json", *MOCK, "review this diff", input=DIFF)
    assert result.returncode == 0, result.stderr
    (text,) = user_texts(result.stdout)
    assert text == (
        "review this diff\n\n[stdin attached: 6 lines, 81 B]\n<stdin>\n" + DIFF + "</stdin>\n"
    )
    stored = [line for path in session_files(sandbox) for line in path.read_text().splitlines()]
    assert any("stdin attached: 6 lines" in line and "+x = 2" in line for line in stored)


@pytest.mark.e2e
def test_a_large_piped_input_is_cut_and_the_note_says_so(sandbox: Sandbox) -> None:
    line = "+" + "y" * 1022 + "\n"  # 1 KB a line: 300 KB in all, over the 256 KB cap
    result = sandbox.run("send", "--stdio", "--json", *MOCK, "summarise", input=line * 300)
    assert result.returncode == 0, result.stderr
    (text,) = user_texts(result.stdout)
    note = "stdin attached: the first 256 KB (256 lines) of 300 KB; the rest was cut"
    assert text.startswith(f"summarise\n\n[{note}]\n<stdin>\n")
    assert text.count(line) == 256
    assert note in result.stderr  # said on stderr too, even with --json


@pytest.mark.e2e
def test_the_words_alone_when_stdin_is_not_a_pipe(sandbox: Sandbox) -> None:
    """stdin from /dev/null (a character device): not read, nothing attached."""
    result = sandbox.run("send", "--stdio", "--json", *MOCK, "how are you")
    assert result.returncode == 0, result.stderr
    assert user_texts(result.stdout) == ["how are you"]


@pytest.mark.e2e
def test_an_unknown_command_from_send_leaves_no_session(sandbox: Sandbox) -> None:
    result = sandbox.run("send", "--json", *MOCK, "/no-such-command", "now")
    assert result.returncode == 2, result.stderr
    assert "unknown command /no-such-command" in result.stderr
    last: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    assert last["type"] == "result"
    assert last["exitCode"] == 2
    listing = sandbox.run("sessions", "list", "--json")
    assert json.loads(listing.stdout)["sessions"] == []
    assert session_files(sandbox) == []


def test_an_empty_pipe_adds_nothing_and_a_file_counts_as_piped(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with empty.open("rb") as stream:
        assert read_prompt(["hi"], stdin_tty=False, stdin=stream).text == "hi"
    data = tmp_path / "notes.txt"
    data.write_bytes(b"one\ntwo")
    with data.open("rb") as stream:
        prompt = read_prompt(["sum", "up"], stdin_tty=False, stdin=stream)
    assert prompt.text == "sum up\n\n[stdin attached: 2 lines, 7 B]\n<stdin>\none\ntwo\n</stdin>\n"
    assert prompt.shown == "sum up\n\n[stdin attached: 2 lines, 7 B]"


def test_the_cap_and_an_unreadable_stream() -> None:
    """A stream without a file descriptor (not a pipe or a file) is never read."""
    assert read_prompt(["x"], stdin_tty=False, stdin=io.BytesIO(b"data")).text == "x"
    reader, writer = _pipe_with(b"z" * (STDIN_CAP + 10))
    with reader:
        prompt = read_prompt(["x"], stdin_tty=False, stdin=reader)
    writer.wait()
    assert prompt.note == ("stdin attached: the first 256 KB (1 line) of 256 KB; the rest was cut")


def _pipe_with(data: bytes) -> tuple[Any, subprocess.Popen[bytes]]:
    """The read end of a real pipe that a child process fills with ``data``."""
    writer = subprocess.Popen(
        ["python3", "-c", "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert writer.stdin is not None
    assert writer.stdout is not None
    writer.stdin.write(data)
    writer.stdin.close()
    return writer.stdout, writer
