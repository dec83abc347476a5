"""One-line descriptions of tool calls and outcomes, and the small number formatters."""

from __future__ import annotations

from agentctl.toolfmt import (
    call_failed,
    describe_call,
    describe_outcome,
    display_path,
    edit_counts,
    format_bytes,
    format_cost,
    format_count,
    format_seconds,
    shorten,
)


def test_shorten_keeps_short_text_and_marks_more_lines() -> None:
    """Short text is kept; a multi-line command shows its first line and an ellipsis."""
    assert shorten("npm test") == "npm test"
    assert shorten("make\nmake install") == "make …"
    assert shorten("x" * 100, 10) == "x" * 9 + "…"
    assert shorten("") == ""


def test_display_path_is_relative_inside_cwd_only() -> None:
    """Paths inside the working directory are shown relative; others stay absolute."""
    assert display_path("/proj/src/app.py", "/proj") == "src/app.py"
    assert display_path("/etc/passwd", "/proj") == "/etc/passwd"
    assert display_path("/proj", "/proj") == "."
    assert display_path("rel.txt", None) == "rel.txt"


def test_describe_call_per_tool() -> None:
    """bash shows its command, file tools their path, search tools pattern and path."""
    assert describe_call("bash", {"command": "npm test"}) == "npm test"
    assert describe_call("edit", {"path": "/p/src/app.py"}, "/p") == "src/app.py"
    assert describe_call("read", {"path": "/p/a.py", "offset": 40}, "/p") == "a.py:40"
    assert describe_call("ls", {}) == "."
    assert describe_call("grep", {"pattern": "TODO", "path": "/p/src"}, "/p") == "TODO  src"
    assert describe_call("find", {"pattern": "*.py"}) == "*.py"
    assert describe_call("custom", {"a": 1}) == '{"a":1}'
    assert describe_call("custom", {}) == ""


def test_describe_call_tolerates_wrong_types() -> None:
    """Mistyped arguments give a shorter description, not an exception."""
    assert describe_call("bash", {"command": 42}) == ""
    assert describe_call("edit", {"path": None}) == ""


def test_bash_outcome_shows_exit_code_duration_and_truncation() -> None:
    """bash outcomes name the exit code, the duration and where truncated output went."""
    details = {"exitCode": 0, "durationMs": 420}
    assert describe_outcome("bash", details, False, "") == "exit 0 · 0.4s"
    failed = {"exitCode": 2, "durationMs": 12_000, "truncated": True, "spillPath": "/tmp/o"}
    assert describe_outcome("bash", failed, True, "") == (
        "exit 2 · 12s · output truncated, full in /tmp/o"
    )
    assert describe_outcome("bash", {"timedOut": True, "durationMs": 5000}, True, "") == (
        "timed out · 5.0s"
    )
    # the daemon sends the duration as a float
    assert describe_outcome("bash", {"exitCode": 0, "durationMs": 1234.5}, False, "") == (
        "exit 0 · 1.2s"
    )


def test_a_failed_call_is_a_non_zero_exit_a_timeout_or_an_error() -> None:
    assert call_failed("bash", {"exitCode": 1}, False)
    assert call_failed("bash", {"exitCode": 0, "timedOut": True}, False)
    assert call_failed("edit", {}, True)
    assert not call_failed("bash", {"exitCode": 0}, False)
    assert not call_failed("write", None, False)


def test_edit_and_write_outcomes() -> None:
    """edit shows added/removed lines; write whether it created the file and its size."""
    assert describe_outcome("edit", {"added": 3, "removed": 1}, False, "") == "(+3 −1)"
    assert edit_counts({}) == ""
    assert describe_outcome("write", {"created": True, "bytes": 2048}, False, "") == (
        "created 2.0 KB"
    )
    assert describe_outcome("write", {"bytes": 10}, False, "") == "wrote 10 B"
    assert describe_outcome("read", None, False, "contents") == ""


def test_error_outcome_is_the_first_line_of_the_result() -> None:
    """A failed call shows what the model was told, first line only."""
    text = "Found 2 occurrences of the text\nPlease add context."
    assert describe_outcome("edit", {}, True, text) == "Found 2 occurrences of the text …"
    assert describe_outcome("read", None, True, "") == "failed"


def test_number_formatters() -> None:
    """Counts, sizes, durations and costs read naturally."""
    assert [format_count(n) for n in (950, 1234, 3_400_000)] == ["950", "1.2k", "3.4M"]
    assert [format_bytes(n) for n in (512, 1536, 3 * 1024 * 1024)] == ["512 B", "1.5 KB", "3.0 MB"]
    assert [format_seconds(s) for s in (0.25, 42, 125)] == ["0.2s", "42s", "2m05s"]
    assert [format_cost(c) for c in (0, 0.00123, 1.5)] == ["$0", "$0.0012", "$1.50"]
