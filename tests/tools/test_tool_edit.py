"""The edit tool: replacements, every error case, stale files, line endings."""

from __future__ import annotations

from pathlib import Path

from agentd.tools.base import ToolContext
from tests.tools.conftest import call, text_of

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


async def test_single_replacement_with_diff_details(work: Path, ctx: ToolContext) -> None:
    (work / "m.py").write_text(SOURCE)
    result = await call(
        "edit",
        ctx,
        path="m.py",
        old_string="def g():\n    return 1",
        new_string="def g():\n    return 2\n    # more",
    )
    assert not result.is_error, text_of(result)
    expected = "def f():\n    return 1\n\n\ndef g():\n    return 2\n    # more\n"
    assert (work / "m.py").read_text() == expected
    assert text_of(result) == "Edited m.py: 1 replacement (+2 −1), first change at line 6."
    details = result.details
    assert details.first_changed_line == 6
    assert (details.added, details.removed) == (2, 1)
    assert details.diff.startswith("--- a/m.py\n+++ b/m.py\n@@ -3,4 +3,5 @@\n")
    assert "-    return 1\n+    return 2\n+    # more\n" in details.diff


async def test_not_found_shows_closest_lines(work: Path, ctx: ToolContext) -> None:
    (work / "m.py").write_text(SOURCE)
    result = await call(
        "edit", ctx, path="m.py", old_string="def gg():\n  return 1", new_string="x"
    )
    assert result.is_error
    out = text_of(result)
    assert "old_string was not found in m.py" in out
    assert "     5\tdef g():" in out
    assert (work / "m.py").read_text() == SOURCE


async def test_not_found_mentions_whitespace(work: Path, ctx: ToolContext) -> None:
    (work / "m.py").write_text(SOURCE)
    result = await call("edit", ctx, path="m.py", old_string="def f():\n  return 1", new_string="x")
    assert result.is_error
    assert "check the indentation" in text_of(result)


async def test_multiple_matches_lists_count_and_lines(work: Path, ctx: ToolContext) -> None:
    (work / "m.py").write_text(SOURCE)
    result = await call("edit", ctx, path="m.py", old_string="return 1", new_string="return 3")
    assert result.is_error
    assert "occurs 2 times" in text_of(result)
    assert "lines 2, 6" in text_of(result)
    assert "replace_all" in text_of(result)
    assert (work / "m.py").read_text() == SOURCE


async def test_replace_all(work: Path, ctx: ToolContext) -> None:
    (work / "m.py").write_text(SOURCE)
    result = await call(
        "edit", ctx, path="m.py", old_string="return 1", new_string="return 3", replace_all=True
    )
    assert result.details.replacements == 2
    assert (work / "m.py").read_text().count("return 3") == 2


async def test_identical_and_empty_strings_refused(work: Path, ctx: ToolContext) -> None:
    (work / "m.py").write_text(SOURCE)
    same = await call("edit", ctx, path="m.py", old_string="def f", new_string="def f")
    assert same.is_error
    assert "identical" in text_of(same)
    empty = await call("edit", ctx, path="m.py", old_string="", new_string="x")
    assert empty.is_error
    assert "empty" in text_of(empty)


async def test_batch_is_all_or_nothing(work: Path, ctx: ToolContext) -> None:
    (work / "m.py").write_text(SOURCE)
    edits = [
        {"old_string": "def f():", "new_string": "def first():"},
        {"old_string": "missing", "new_string": "x"},
    ]
    result = await call("edit", ctx, path="m.py", edits=edits)
    assert result.is_error
    assert text_of(result).startswith("Edit 2 of 2: old_string was not found")
    assert (work / "m.py").read_text() == SOURCE


async def test_batch_applies_in_order(work: Path, ctx: ToolContext) -> None:
    (work / "m.py").write_text(SOURCE)
    edits = [
        {"old_string": "def f():", "new_string": "def first():"},
        {"old_string": "def first():\n    return 1", "new_string": "def first():\n    return 0"},
        {"old_string": "return 1", "new_string": "return 9", "replace_all": True},
    ]
    result = await call("edit", ctx, path="m.py", edits=edits)
    assert not result.is_error, text_of(result)
    assert (work / "m.py").read_text() == (
        "def first():\n    return 0\n\n\ndef g():\n    return 9\n"
    )
    assert result.details.replacements == 3


async def test_both_forms_or_neither_refused(work: Path, ctx: ToolContext) -> None:
    (work / "m.py").write_text(SOURCE)
    both = await call(
        "edit",
        ctx,
        path="m.py",
        old_string="a",
        new_string="b",
        edits=[{"old_string": "c", "new_string": "d"}],
    )
    assert both.is_error
    assert "not both" in text_of(both)
    neither = await call("edit", ctx, path="m.py", old_string="a")
    assert neither.is_error
    assert "both old_string and new_string" in text_of(neither)
    none = await call("edit", ctx, path="m.py", edits=[])
    assert none.is_error


async def test_stale_file_refused_until_read_again(work: Path, ctx: ToolContext) -> None:
    target = work / "m.py"
    target.write_text(SOURCE)
    await call("read", ctx, path="m.py")
    target.write_text(SOURCE + "# changed elsewhere\n")  # a new size: a new stamp at once
    result = await call("edit", ctx, path="m.py", old_string="def f", new_string="def h")
    assert result.is_error
    assert "changed on disk since you last read it" in text_of(result)
    await call("read", ctx, path="m.py")
    again = await call("edit", ctx, path="m.py", old_string="def f", new_string="def h")
    assert not again.is_error


async def test_unread_file_may_be_edited_and_consecutive_edits_work(
    work: Path, ctx: ToolContext
) -> None:
    (work / "m.py").write_text(SOURCE)
    first = await call("edit", ctx, path="m.py", old_string="def f", new_string="def h")
    second = await call("edit", ctx, path="m.py", old_string="def h", new_string="def k")
    assert not first.is_error
    assert not second.is_error


async def test_crlf_kept_and_lf_strings_match(work: Path, ctx: ToolContext) -> None:
    target = work / "w.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await call("edit", ctx, path="w.txt", old_string="one\ntwo", new_string="1\n2\n2b")
    assert not result.is_error, text_of(result)
    assert target.read_bytes() == b"1\r\n2\r\n2b\r\nthree\r\n"


async def test_missing_final_newline_stays_missing(work: Path, ctx: ToolContext) -> None:
    target = work / "n.txt"
    target.write_bytes(b"a\nb")
    await call("edit", ctx, path="n.txt", old_string="b", new_string="c")
    assert target.read_bytes() == b"a\nc"


async def test_non_utf8_bytes_survive(work: Path, ctx: ToolContext) -> None:
    target = work / "l1.txt"
    target.write_bytes(b"caf\xe9\nx = 1\n")
    await call("edit", ctx, path="l1.txt", old_string="x = 1", new_string="x = 2")
    assert target.read_bytes() == b"caf\xe9\nx = 2\n"


async def test_missing_binary_and_directory(work: Path, ctx: ToolContext) -> None:
    missing = await call("edit", ctx, path="nope.py", old_string="a", new_string="b")
    assert missing.is_error
    assert "write tool" in text_of(missing)
    (work / "b.bin").write_bytes(b"\0\1\2")
    binary = await call("edit", ctx, path="b.bin", old_string="a", new_string="b")
    assert binary.is_error
    assert "binary" in text_of(binary)
    (work / "d").mkdir()
    directory = await call("edit", ctx, path="d", old_string="a", new_string="b")
    assert directory.is_error
    assert "directory" in text_of(directory)
