"""The chat's !command: real bash, live output, captured context."""

from __future__ import annotations

import io
import tempfile

from agentctl.chat.shell import ShellResult, clip, format_context, run_shell


def test_run_shell_captures_output_and_exit_code() -> None:
    """Output (stdout and stderr) is echoed and captured; the exit code is kept."""
    cwd = tempfile.mkdtemp(dir="/tmp")
    out = io.StringIO()
    result = run_shell("pwd; echo oops >&2; exit 3", cwd, out)
    assert result.exit_code == 3
    assert result.output.splitlines() == [cwd, "oops"]
    assert out.getvalue() == result.output


def test_format_context_for_the_next_prompt() -> None:
    """The note sent with the next prompt quotes the command, status and output."""
    text = format_context(ShellResult("ls", "a\nb\n", 0))
    assert text == "I ran this shell command myself (exit code 0):\n$ ls\n```\na\nb\n```"
    assert "(no output)" in format_context(ShellResult("true", "", 0))
    assert "(interrupted)" in format_context(ShellResult("sleep 9", "", None))


def test_clip_keeps_head_and_tail() -> None:
    """Long output keeps its start and (mostly) its end."""
    text = "A" * 100 + "B" * 1000 + "C" * 100
    clipped = clip(text, 200)
    assert clipped.startswith("A" * 50)
    assert clipped.endswith("C" * 100)
    assert "1000 characters omitted" in clipped
    assert clip("short", 200) == "short"
