"""The shared output limits."""

from __future__ import annotations

from agentd.tools.defaults import ToolSettings
from agentd.tools.files.truncate import (
    Limits,
    count_lines,
    cut_line,
    notice,
    truncate_head,
    truncate_tail,
)


def test_fits() -> None:
    result = truncate_head("a\nb\n", Limits())
    assert (result.text, result.truncated, result.total_lines) == ("a\nb\n", False, 2)


def test_head_by_lines_and_bytes() -> None:
    text = "".join(f"{n}\n" for n in range(10))
    head = truncate_head(text, Limits(max_lines=3))
    assert (head.text, head.limit, head.kept_lines, head.total_lines) == ("0\n1\n2", "lines", 3, 10)
    head = truncate_head("aaaa\nbbbb\ncccc\n", Limits(max_bytes=11))
    assert (head.text, head.limit) == ("aaaa\nbbbb", "bytes")


def test_tail_by_lines_and_bytes() -> None:
    text = "".join(f"{n}\n" for n in range(10))
    tail = truncate_tail(text, Limits(max_lines=2))
    assert (tail.text, tail.kept_lines) == ("8\n9", 2)
    tail = truncate_tail("aaaa\nbbbb\ncccc", Limits(max_bytes=11))
    assert tail.text == "bbbb\ncccc"


def test_single_huge_line_is_cut_not_dropped() -> None:
    assert truncate_head("x" * 100, Limits(max_bytes=10)).text == "x" * 10
    assert truncate_tail("ab" * 50 + "end", Limits(max_bytes=3)).text == "end"


def test_multibyte_never_split() -> None:
    head = truncate_head("é" * 10, Limits(max_bytes=5))
    assert head.text == "éé"


def test_limits_from_settings() -> None:
    limits = Limits.from_settings(ToolSettings(max_output_lines=5))
    assert limits == Limits(max_lines=5)


def test_helpers() -> None:
    assert count_lines("") == 0
    assert count_lines("a") == 1
    assert count_lines("a\n") == 1
    assert count_lines("a\nb") == 2
    assert cut_line("abcdef", 3) == "abc… [line cut: 3 more chars]"
    assert cut_line("abc", 3) == "abc"
    result = truncate_tail("1\n2\n3\n", Limits(max_lines=1))
    assert notice(result, kept="last", limits=Limits(max_lines=1)) == (
        "Output truncated: showing the last 1 of 3 lines (1-line limit)."
    )
