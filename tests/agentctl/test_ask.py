"""Answering permission requests at the terminal (driven here through a real pipe)."""

from __future__ import annotations

import io
import os

import pytest

from agentctl.approval.ask import TerminalApprover, parse_answer, question
from agentctl.render.style import Style
from agentd.protocol.methods import RequestPermissionParams

ALL_OPTIONS = ["allow_once", "allow_always", "reject_once", "reject_always"]


def request(options: list[str] | None = None) -> RequestPermissionParams:
    return RequestPermissionParams(
        session_id="s",
        tool_call_id="c1",
        tool="bash",
        args={"command": "rm -rf build"},
        options=options or ALL_OPTIONS,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("typed", "option"),
    [
        ("y", "allow_once"),
        ("YES", "allow_once"),
        (" a ", "allow_always"),
        ("n", "reject_once"),
        ("", "reject_once"),
        ("never", "reject_always"),
        ("maybe", None),
    ],
)
def test_parse_answer(typed: str, option: str | None) -> None:
    """Short and long answers map to options; an empty answer refuses."""
    assert parse_answer(typed) == option


def test_question_names_tool_and_command() -> None:
    """The question shows the tool and what it would do."""
    text = question(Style(False), request(), None)
    assert text.startswith("? allow bash  rm -rf build  [y]es")


async def answer_with(typed: bytes, params: RequestPermissionParams) -> tuple[str, str]:
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, typed)
        os.close(write_fd)
        err = io.StringIO()
        paused: list[bool] = []
        approver = TerminalApprover(
            err, Style(False), before_asking=lambda: paused.append(True), input_fd=read_fd
        )
        option = await approver(params)
        assert paused == [True]
        return option, err.getvalue()
    finally:
        os.close(read_fd)


async def test_approver_reads_the_answer() -> None:
    """A typed "a" allows always; the question went to the error stream."""
    option, shown = await answer_with(b"a\n", request())
    assert option == "allow_always"
    assert "allow bash" in shown


async def test_approver_refuses_at_end_of_input() -> None:
    """No answer at all (EOF) refuses."""
    option, _ = await answer_with(b"", request())
    assert option == "reject_once"


async def test_approver_refuses_an_option_not_offered() -> None:
    """Allowing always is refused when the daemon did not offer it."""
    option, _ = await answer_with(b"always\n", request(["allow_once", "reject_once"]))
    assert option == "reject_once"
