"""Approvals in ``ask`` mode: ``window/showMessageRequest`` naming the tool and its input,
with ``Allow once``, ``Allow always`` and ``Reject``; a dismissed or unanswered request
refuses the call."""

from __future__ import annotations

from tests.lsp.conftest import Box, Editor, spawn


def _refused(box: Box) -> bool:
    """Whether the bash call was refused: it did not run, and the model was told so."""
    ran = (box.project / "approved.txt").exists()
    [session_file] = list(box.sessions.rglob("*.jsonl"))
    told = '"isError":true' in session_file.read_text()
    assert ran != told
    return not ran


async def test_an_allowed_command_runs(box: Box) -> None:
    editor = Editor(approval="Allow once")
    async with spawn(box, editor, "--permission-mode", "ask"):
        answer = await editor.run("agentd.prompt", {"prompt": "say approved"})
        assert answer["text"] == "Ran it."
        [message] = editor.approvals
        assert message == "agentd wants to run bash: touch approved.txt"
    assert not _refused(box)


async def test_a_rejected_command_is_refused(box: Box) -> None:
    editor = Editor(approval="Reject")
    async with spawn(box, editor, "--permission-mode", "ask"):
        answer = await editor.run("agentd.prompt", {"prompt": "say approved"})
        assert answer["stopReason"] == "end_turn"
        assert len(editor.approvals) == 1
    assert _refused(box)


async def test_a_dismissed_request_is_refused(box: Box) -> None:
    editor = Editor(approval=None)
    async with spawn(box, editor, "--permission-mode", "ask"):
        await editor.run("agentd.prompt", {"prompt": "say approved"})
        assert len(editor.approvals) == 1
    assert _refused(box)


async def test_no_answer_within_the_approval_timeout_is_refused(box: Box) -> None:
    box.user_config("[permissions]\ntimeout = 1\n")
    editor = Editor(approval="wait")
    async with spawn(box, editor, "--permission-mode", "ask"):
        answer = await editor.run("agentd.prompt", {"prompt": "say approved"})
        assert answer["stopReason"] == "end_turn"
        assert len(editor.approvals) == 1
    assert _refused(box)


async def test_allow_always_is_not_asked_again(box: Box) -> None:
    editor = Editor(approval="Allow always")
    async with spawn(box, editor, "--permission-mode", "ask"):
        await editor.run("agentd.prompt", {"prompt": "say approved"})
        (box.project / "approved.txt").unlink()
        answer = await editor.run("agentd.prompt", {"prompt": "say approved"})
        assert answer["text"] == "Ran it."
        assert len(editor.approvals) == 1
    assert (box.project / "approved.txt").exists()


async def test_control_characters_in_a_command_are_shown_escaped(box: Box) -> None:
    """A command that hides its start behind ``\\r`` and an erase-line sequence (or reorders
    itself with a bidi override) is shown with those characters written out: editors in a
    terminal print the message."""
    from tests.lsp.scenarios import SCENARIOS
    from tests.scenarios import tool_call

    hidden = "touch PWNED\r\x1b[2Kecho hi \u202etxt.gnp"
    steps = [
        {
            "response": {
                "content": "Running.",
                "tool_calls": [tool_call("bash", {"command": hidden})],
            }
        },
        {"response": {"content": "Done.\x1b]2;PWNED-TITLE\x07"}},
    ]
    box.use_scenarios([{"name": "hidden", "trigger": "say hidden", "steps": steps}, *SCENARIOS])
    editor = Editor(approval="Reject")
    async with spawn(box, editor, "--permission-mode", "ask"):
        await editor.run("agentd.prompt", {"prompt": "say hidden"})
        [message] = editor.approvals
    assert message == "agentd wants to run bash: touch PWNED\\r\\x1b[2Kecho hi \\u202etxt.gnp"
    assert not (box.project / "PWNED").exists()
