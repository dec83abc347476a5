"""Reading the prompt, @FILE options, --cwd and the session-flag combination rules."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import pytest

from agentctl.commands.session_choice import check_session_flags
from agentctl.common import UsageError, read_text_option, resolve_cwd
from agentctl.options import SendOptions
from agentctl.prompt.piped import read_prompt


def test_prompt_from_words_or_piped_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Words alone are the prompt; without words the whole of a piped stdin is."""
    assert read_prompt(["fix", "it"], stdin_tty=True).text == "fix it"
    piped = read_prompt([], stdin_tty=False, stdin=io.BytesIO(b"line one\nline two\n"))
    assert piped.text == "line one\nline two\n"
    assert piped.note is None


def test_missing_or_empty_prompt_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """No words on a terminal, or only whitespace, is refused with a clear message."""
    with pytest.raises(UsageError, match="no prompt"):
        read_prompt([], stdin_tty=True)
    with pytest.raises(UsageError, match="empty"):
        read_prompt([], stdin_tty=False, stdin=io.BytesIO(b"  \n"))


def test_text_option_reads_at_file() -> None:
    """TEXT is taken as is; @FILE is read; a missing file is a usage error."""
    path = Path(tempfile.mkdtemp(dir="/tmp")) / "prompt.txt"
    path.write_text("be terse", encoding="utf-8")
    assert read_text_option("plain", "--system-prompt") == "plain"
    assert read_text_option(f"@{path}", "--system-prompt") == "be terse"
    assert read_text_option(None, "--system-prompt") is None
    with pytest.raises(UsageError, match="--system-prompt @/nonexistent"):
        read_text_option("@/nonexistent/x", "--system-prompt")


def test_resolve_cwd() -> None:
    """--cwd must be an existing directory; it is made absolute."""
    directory = tempfile.mkdtemp(dir="/tmp")
    assert resolve_cwd(directory) == str(Path(directory).resolve())
    with pytest.raises(UsageError, match="not a directory"):
        resolve_cwd(directory + "/missing")


def test_session_flags_are_exclusive() -> None:
    """Only one of --session, --continue and --fork may be given."""
    ok = SendOptions(command="send", session="a")
    check_session_flags(ok)
    both = SendOptions(command="send", session="a", continue_=True, fork="b")
    with pytest.raises(UsageError, match="--session and --continue and --fork"):
        check_session_flags(both)
