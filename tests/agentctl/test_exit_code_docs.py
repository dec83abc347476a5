"""The exit codes are one list (:data:`agentctl.run.exitcodes.EXIT_CODES`) shown alike by
``--help``, README.md's "Using it" and the agentctl README's table; the ``send`` options
table is one Markdown table (no paragraph splitting it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentctl.cli import main
from agentctl.run import outcome
from agentctl.run.exitcodes import EXIT_CODES, exit_code_words

ROOT = Path(__file__).resolve().parents[2]
CTL_README = ROOT / "clients" / "agentctl" / "README.md"


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def section(text: str, heading: str) -> str:
    """The body of the Markdown section ``heading`` (up to the next heading)."""
    start = text.index(heading + "\n") + len(heading) + 1
    following = re.search(r"^#{1,6} ", text[start:], re.MULTILINE)
    return text[start : start + following.start()] if following else text[start:]


def test_the_list_covers_every_code_the_client_returns() -> None:
    assert [code for code, _ in EXIT_CODES] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 130, 141]
    not_runs = {outcome.OUTPUT_CLOSED, outcome.REWIND_CONFLICTS}
    assert set(outcome.STOP_REASONS) | not_runs == {c for c, _ in EXIT_CODES}


@pytest.mark.parametrize("argv", [["--help"], ["send", "--help"]])
def test_help_lists_every_code(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    assert flat(f"exit codes: {exit_code_words()}") in flat(capsys.readouterr().out)


def test_the_readme_lists_the_same_codes() -> None:
    using_it = section((ROOT / "README.md").read_text(encoding="utf-8"), "## Using it")
    assert flat(f"exit codes ({exit_code_words()})") in flat(using_it)


def test_the_agentctl_readme_table_has_one_row_per_code_in_the_same_words() -> None:
    table = section(CTL_README.read_text(encoding="utf-8"), "### Exit codes")
    rows = re.findall(r"^\| (\d+) \| ([^\n]*) \|$", table, re.MULTILINE)
    assert [int(code) for code, _ in rows] == [code for code, _ in EXIT_CODES]
    for (_, meaning), (_, words) in zip(rows, EXIT_CODES, strict=True):
        assert meaning.lower().startswith(words), (meaning, words)


def test_the_send_options_table_is_one_table() -> None:
    body = section(CTL_README.read_text(encoding="utf-8"), "### `send` options")
    lines = body.strip().splitlines()
    table = [line for line in lines if line.startswith("|")]
    first = lines.index(table[0])
    assert lines[first : first + len(table)] == table, "a line that is not a row splits it"
    assert table[:2] == ["| Option | Meaning |", "|---|---|"]
    assert any(line.startswith("| `--json` / `-q, --quiet` |") for line in table)
