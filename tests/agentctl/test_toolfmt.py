"""One-line descriptions of tool calls and outcomes, and the small number formatters."""

from __future__ import annotations

from typing import Any

from agentctl.render.toolfmt import (
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
from agentd.protocol.tool_details import (
    BashDetails,
    EditDetails,
    ReadDetails,
    ToolErrorDetails,
    UndoEditDetails,
    WriteDetails,
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
    assert (
        describe_call("web_fetch", {"url": "https://docs.python.org/3/"})
        == "https://docs.python.org/3/"
    )
    assert describe_call("todo", {"todos": [{"content": "a"}, {"content": "b"}]}) == "2 steps"
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


def _bash(**fields: Any) -> BashDetails:
    """A bash call's details: exit 0 after 0.4 s, nothing cut, unless ``fields`` say else."""
    base: dict[str, Any] = {"exit_code": 0, "signal": None, "timed_out": False}
    base |= {"duration_ms": 420.0, "truncated": False, "spill_path": None}
    base |= {"command": "true", "total_bytes": 0, "cwd": "/w"}
    return BashDetails(**(base | fields))


def _edit(added: int, removed: int) -> EditDetails:
    return EditDetails(
        path="/w/a", replacements=1, diff="", first_changed_line=1, added=added, removed=removed
    )


def _write(created: bool, size: int) -> WriteDetails:
    return WriteDetails(path="/w/a", created=created, bytes=size, lines=1)


def test_bash_outcome_shows_exit_code_duration_and_truncation() -> None:
    """bash outcomes name the exit code, the duration and where truncated output went."""
    assert describe_outcome(_bash(), False, "") == "exit 0 · 0.4s"
    failed = _bash(exit_code=2, duration_ms=12_000, truncated=True, spill_path="/tmp/o")
    assert describe_outcome(failed, True, "") == ("exit 2 · 12s · output truncated, full in /tmp/o")
    timed_out = _bash(exit_code=None, timed_out=True, duration_ms=5000)
    assert describe_outcome(timed_out, True, "") == "timed out · 5.0s"
    # the daemon sends the duration as a float
    assert describe_outcome(_bash(duration_ms=1234.5), False, "") == "exit 0 · 1.2s"


def test_a_failed_call_is_a_non_zero_exit_a_timeout_or_an_error() -> None:
    assert call_failed(_bash(exit_code=1), False)
    assert call_failed(_bash(timed_out=True), False)
    assert call_failed(ToolErrorDetails(error="tool_error"), True)
    assert not call_failed(_bash(), False)
    assert not call_failed(None, False)


def test_edit_and_write_outcomes() -> None:
    """edit shows added/removed lines; write whether it created the file and its size."""
    assert describe_outcome(_edit(3, 1), False, "") == "(+3 −1)"
    assert edit_counts(UndoEditDetails(path="/w/a", deleted=True, remaining=0)) == ""
    assert describe_outcome(_write(True, 2048), False, "") == "created 2.0 KB"
    assert describe_outcome(_write(False, 10), False, "") == "wrote 10 B"
    read = ReadDetails(path="/w/a", offset=1, lines=1, total_lines=1)
    assert describe_outcome(read, False, "contents") == ""
    assert describe_outcome(None, False, "contents") == ""


def test_error_outcome_is_the_first_line_of_the_result() -> None:
    """A failed call shows what the model was told, first line only."""
    text = "Found 2 occurrences of the text\nPlease add context."
    failure = ToolErrorDetails(error="tool_error")
    assert describe_outcome(failure, True, text) == "Found 2 occurrences of the text …"
    assert describe_outcome(None, True, "") == "failed"


def test_number_formatters() -> None:
    """Counts, sizes, durations and costs read naturally."""
    assert [format_count(n) for n in (950, 1234, 3_400_000)] == ["950", "1.2k", "3.4M"]
    assert [format_bytes(n) for n in (512, 1536, 3 * 1024 * 1024)] == ["512 B", "1.5 KB", "3.0 MB"]
    assert [format_seconds(s) for s in (0.25, 42, 125)] == ["0.2s", "42s", "2m05s"]
    assert [format_cost(c) for c in (0, 0.00123, 1.5)] == ["$0", "$0.0012", "$1.50"]


def test_output_block_keeps_the_last_lines_and_drops_agentds_notes() -> None:
    from agentctl.render.outputblock import output_lines, output_text
    from agentctl.render.style import Style
    from agentd.protocol.tool_details import BashDetails

    details = BashDetails(
        command="x",
        exit_code=3,
        signal=None,
        timed_out=False,
        duration_ms=1.0,
        truncated=False,
        spill_path=None,
        total_bytes=0,
        cwd=None,
    )
    text = output_text(
        "a\n\tb\n" + "\n".join(f"l{i}" for i in range(7)) + "\n[Exit code 3.]", details
    )
    assert text.endswith("l6")
    lines = output_lines(text, Style(False), limit=3)
    assert lines == ["  ⎿  … 6 lines above", "     l4", "     l5", "     l6"]
    assert output_lines(output_text("(no output)\n[Exit code 1.]", details), Style(False)) == []
    assert output_lines("x" * 500, Style(False))[0].endswith("…")


def test_output_block_keeps_a_commands_own_bracketed_last_line() -> None:
    from agentctl.render.outputblock import output_text
    from agentd.protocol.tool_details import BashDetails

    details = BashDetails(
        command="x",
        exit_code=1,
        signal=None,
        timed_out=False,
        duration_ms=1.0,
        truncated=False,
        spill_path=None,
        total_bytes=0,
        cwd=None,
    )
    assert output_text("build\n[ok]\n[Exit code 1.]", details) == "build\n[ok]"
