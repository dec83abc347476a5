"""Errors at the command line speak agentctl, not JSON-RPC: commands and flags instead of
method names and params (real daemon over pipes), and argparse's internals never show."""

from __future__ import annotations

import pytest

from agentctl.render.wording import cli_words
from tests.agentctl.harness import Sandbox, json_lines, read_until

pytestmark = pytest.mark.e2e
MOCK = ("--provider", "mock")


def test_unknown_session_points_to_sessions_list(sandbox: Sandbox) -> None:
    result = sandbox.run("send", "--stdio", "--session", "nope", "hi")
    assert result.returncode == 2
    assert "(see `agentctl sessions list`)" in result.stderr
    assert "session/list" not in result.stderr


def test_bad_numbers_are_explained_in_words(sandbox: Sandbox) -> None:
    result = sandbox.run("send", "--max-turns", "abc", "hi")
    assert result.returncode == 2
    assert "argument --max-turns: expected a whole number, got 'abc'" in result.stderr
    assert "_positive" not in result.stderr
    timeout = sandbox.run("send", "--timeout", "soon", "hi")
    assert "argument --timeout: expected a number, got 'soon'" in timeout.stderr


def test_refused_permission_says_which_flag_helps(sandbox: Sandbox) -> None:
    result = sandbox.run("send", "--stdio", *MOCK, "--permission", "ask", "hello world")
    assert result.returncode == 5
    assert "use --permission auto, or --permission ask on a terminal" in result.stderr
    assert "requestPermission" not in result.stderr


def test_removing_a_running_session_suggests_cancel_and_force(sandbox: Sandbox) -> None:
    """The session runs a command that never ends by itself, so it is still running when the
    removal comes, however long starting ``agentctl sessions rm`` takes."""
    sandbox.use_test_scenarios()
    run = sandbox.popen_bytes("send", "--json", *MOCK, "run the long command")
    session_id = ""
    try:
        started = read_until(run, "stdout", '"tool_execution_start"')
        session_id = json_lines(started.split("\n", 1)[0])[0]["sessionId"]
        result = sandbox.run("sessions", "rm", session_id)
        assert result.returncode != 0
        assert f"cancel it (`agentctl cancel {session_id}`) or use --force" in result.stderr
        assert "force: true" not in result.stderr
    finally:
        if session_id:
            sandbox.run("cancel", session_id)  # ends the sleep with the run
        run.kill()
        run.communicate()


def test_every_known_phrase_is_rewritten() -> None:
    assert cli_words("session abc is running; cancel it or pass force: true") == (
        "session abc is running; cancel it (`agentctl cancel abc`) or use --force"
    )
    assert (
        cli_words(
            "session abc is running; wait for it to finish, or use session/steer, "
            "session/followUp or session/cancel"
        )
        == "session abc is running; wait for it to finish, or stop it with `agentctl cancel abc`"
    )
    assert "agentctl's environment" in cli_words(
        "(provider variables were read from the client's environment, sent with the request)"
    )
    assert cli_words("choose one …, or pass provider") == "choose one …, or pass --provider"
    assert cli_words("something else entirely") == "something else entirely"


def test_short_id_prefixes_work_wherever_an_id_does(sandbox: Sandbox) -> None:
    """A unique prefix names the session (send --session, sessions show/export, attach);
    an ambiguous one lists the candidates (exit 2)."""
    first = json_lines(sandbox.run("send", "--json", *MOCK, "how are you").stdout)[0]
    session_id = first["sessionId"]
    prefix = session_id[:6]
    again = sandbox.run("send", "--json", "--session", prefix, *MOCK, "how are you")
    assert again.returncode == 0, again.stderr
    assert json_lines(again.stdout)[0]["sessionId"] == session_id
    assert "how are you" in sandbox.run("sessions", "show", prefix).stdout
    attach = sandbox.run("attach", prefix, "--since", "0", "--until-end", "--json")
    assert attach.returncode == 0, attach.stderr
    ids = {session_id}
    while len({i[:1] for i in ids}) == len(ids):  # until two ids share a first character
        line = json_lines(sandbox.run("send", "--json", *MOCK, "how are you").stdout)[0]
        ids.add(line["sessionId"])
    shared = next(i[:1] for i in ids if sum(j.startswith(i[:1]) for j in ids) > 1)
    cut = sandbox.run("sessions", "list", "--limit", "1")
    assert "… the newest 1 shown; for more: --limit 2" in cut.stdout
    everything = sandbox.run("sessions", "list", "--limit", "1500")  # over one page's cap
    assert everything.returncode == 0, everything.stderr
    assert all(i in everything.stdout for i in ids)
    assert "for more" not in everything.stdout
    ambiguous = sandbox.run("sessions", "show", shared)
    assert ambiguous.returncode == 2
    assert f"{shared!r} matches" in ambiguous.stderr
    assert "give more of the id" in ambiguous.stderr
