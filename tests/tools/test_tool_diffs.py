"""Unified diffs from the prefix/suffix-trimming differ apply back to the new text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agentd.tools.files.diffs import summarize_change

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")


def apply_patch(old: str, diff: str) -> str:
    """Apply a unified diff produced by summarize_change (a minimal patch(1))."""
    source = [line + "\n" for line in old.split("\n")]
    source[-1] = source[-1][:-1]
    if not source[-1]:
        source.pop()
    out: list[str] = []
    cursor = 0
    lines = diff.split("\n")[2:]
    index = 0
    while index < len(lines) and lines[index]:
        match = HUNK.match(lines[index])
        assert match, lines[index]
        start = int(match[1]) - (0 if match[2] == "0" else 1)
        out.extend(source[cursor:start])
        cursor = start
        index += 1
        while index < len(lines) and lines[index] and not lines[index].startswith("@@"):
            sign, body = lines[index][0], lines[index][1:] + "\n"
            no_newline = index + 1 < len(lines) and lines[index + 1].startswith("\\ No newline")
            if no_newline:
                body = body[:-1]
            if sign in " +":
                out.append(body)
            if sign in " -":
                cursor += 1
            index += 2 if no_newline else 1
    out.extend(source[cursor:])
    return "".join(out)


lines_st = st.lists(st.sampled_from(["a", "b", "c", "", "dd", "a b"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(lines_st, lines_st, st.booleans(), st.booleans())
def test_diff_applies(
    old_lines: list[str], new_lines: list[str], old_nl: bool, new_nl: bool
) -> None:
    old = "\n".join(old_lines) + ("\n" if old_nl and old_lines else "")
    new = "\n".join(new_lines) + ("\n" if new_nl and new_lines else "")
    summary = summarize_change(old, new, "f")
    if old == new:
        assert summary.diff == ""
        return
    assert apply_patch(old, summary.diff) == new
    assert summary.added + summary.removed > 0


def test_small_change_in_big_text_is_fast_and_local() -> None:
    old = "".join(f"line {n}\n" for n in range(200_000))
    new = old.replace("line 123456\n", "line 123456 changed\n")
    summary = summarize_change(old, new, "big")
    assert summary.first_changed_line == 123457
    assert (summary.added, summary.removed) == (1, 1)
    assert summary.diff.count("\n") < 15
