"""``agentd.prompt``: a turn in the workspace's session, answered with its final text; the
agent's edits go through the editor (``workspace/applyEdit``) and its reads see the unsaved
buffer; ``$/progress`` carries the streamed text and one line per tool call."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import Box, Editor, spawn

UNSAVED = "def greet(name):\n    pritn('hello', name)\n"
ON_DISK = "def greet(name):\n    pass  # saved long ago: pritn\n"


async def test_an_edit_lands_in_the_open_buffer_not_on_disk(box: Box) -> None:
    draft = box.project / "draft.py"
    draft.write_text(ON_DISK)
    editor = Editor()
    async with spawn(box, editor):
        uri = editor.open(draft, UNSAVED)
        answer = await editor.run("agentd.prompt", {"prompt": "fix the typo", "uri": uri})
        assert answer["stopReason"] == "end_turn"
        assert answer["text"] == "Fixed the typo."
        assert editor.buffers[uri] == "def greet(name):\n    print('hello', name)\n"
        assert draft.read_text() == ON_DISK  # the editor saves, not the agent
        [edit] = editor.edits
        [change] = edit["documentChanges"]
        assert change["textDocument"] == {"uri": uri, "version": 1}  # versioned
        assert change["edits"] == [  # the smallest edit ("tn" → "nt"), not the whole text
            {
                "range": {
                    "start": {"line": 1, "character": 7},
                    "end": {"line": 1, "character": 9},
                },
                "newText": "nt",
            }
        ]
        second = await editor.run("agentd.prompt", {"prompt": "hello world", "uri": uri})
        assert second["sessionId"] == answer["sessionId"]  # one session per workspace folder


async def test_a_refused_edit_fails_the_tool_with_the_editors_reason(box: Box) -> None:
    draft = box.project / "draft.py"
    draft.write_text(ON_DISK)
    editor = Editor(refuse_edits="the buffer is read-only")
    async with spawn(box, editor):
        uri = editor.open(draft, UNSAVED)
        answer = await editor.run("agentd.prompt", {"prompt": "fix the typo", "uri": uri})
        assert answer["stopReason"] == "end_turn"
        assert len(editor.edits) == 1
        assert editor.buffers[uri] == UNSAVED
        assert draft.read_text() == ON_DISK  # no fallback to the disk
    events = [line for line in box.lsp_log.read_text().splitlines() if "read-only" in line]
    assert events, "the refusal is logged"
    sessions = list(box.sessions.rglob("*.jsonl"))
    [session_file] = sessions
    recorded = session_file.read_text()
    assert "edit not applied: the buffer is read-only" in recorded  # what the model was told


async def test_a_new_file_is_created_through_the_editor_and_shown(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor):
        answer = await editor.run("agentd.prompt", {"prompt": "make a new module"})
        assert answer["text"] == "Created fresh.py."
        uri = (box.project / "fresh.py").as_uri()
        [edit] = editor.edits
        create, text = edit["documentChanges"]
        assert create["kind"] == "create"
        assert create["uri"] == uri
        assert text["edits"][0]["newText"] == "x = 1\n"
        assert editor.buffers[uri] == "x = 1\n"
        await editor.wait_for(lambda: uri in editor.shown)  # window/showDocument


async def test_without_apply_edit_the_disk_is_used_and_reads_still_see_the_buffer(
    box: Box,
) -> None:
    draft = box.project / "draft.py"
    draft.write_text("pritn\n")
    editor = Editor(apply_edits=False)
    async with spawn(box, editor):
        uri = editor.open(draft, UNSAVED)
        answer = await editor.run("agentd.prompt", {"prompt": "fix the typo", "uri": uri})
        assert answer["stopReason"] == "end_turn"
        assert editor.edits == []
        # the edit read the unsaved buffer and wrote its result to the disk
        assert draft.read_text() == "def greet(name):\n    print('hello', name)\n"


async def test_progress_streams_the_reply_and_a_line_per_tool_call(box: Box) -> None:
    draft = box.project / "draft.py"
    draft.write_text(ON_DISK)
    editor = Editor()
    async with spawn(box, editor):
        uri = editor.open(draft, UNSAVED)
        token = "editor-token"
        await editor.run(
            "agentd.prompt", {"prompt": "fix the typo", "uri": uri}, work_done_token=token
        )
        await editor.wait_for(lambda: editor.progress.get(token, [{}])[-1].get("kind") == "end")
        values = editor.progress[token]
        assert values[0]["kind"] == "begin"
        assert values[0]["title"] == "agentd"
        assert values[-1] == {"kind": "end", "message": "end_turn"}
        streamed = "".join(v["message"] for v in editor.reports(token))
        assert "Fixing it." in streamed
        assert "edit: draft.py\n" in streamed
        assert "Fixed the typo." in streamed
        assert editor.created_tokens == []  # the request's own token was used
        # without a token, the server makes one (the editor supports it)
        await editor.run("agentd.prompt", {"prompt": "stream a long reply"})
        [made] = editor.created_tokens
        await editor.wait_for(lambda: editor.progress.get(made, [{}])[-1].get("kind") == "end")
        text = "".join(v["message"] for v in editor.reports(made))
        assert text == " ".join(f"w{i}" for i in range(400))  # nothing lost


async def test_no_progress_without_a_token_or_create_support(box: Box) -> None:
    editor = Editor(create_progress=False)
    async with spawn(box, editor):
        answer = await editor.run("agentd.prompt", {"prompt": "hello world"})
        assert answer["stopReason"] == "end_turn"
        assert editor.progress == {}
        assert editor.created_tokens == []


async def test_new_session_replaces_the_workspace_session(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor):
        first = await editor.run("agentd.prompt", {"prompt": "hello world"})
        made = await editor.run("agentd.newSession", {})
        assert made["cwd"] == str(box.project)
        assert made["sessionId"] != first["sessionId"]
        second = await editor.run("agentd.prompt", {"prompt": "hello world"})
        assert second["sessionId"] == made["sessionId"]
        again = await editor.run(
            "agentd.prompt", {"prompt": "hello world", "sessionId": first["sessionId"]}
        )
        assert again["sessionId"] == first["sessionId"]
        with pytest.raises(JsonRpcException) as unknown:
            await editor.run("agentd.prompt", {"prompt": "hello world", "sessionId": "nope"})
        assert unknown.value.code == -32003  # agentd's own error code: session not found


async def test_undo_edit_restores_through_the_editor(box: Box) -> None:
    draft = box.project / "draft.py"
    draft.write_text(ON_DISK)
    editor = Editor()
    async with spawn(box, editor):
        uri = editor.open(draft, UNSAVED)
        answer = await editor.run("agentd.prompt", {"prompt": "fix it then undo", "uri": uri})
        assert answer["text"] == "Back as it was."
        assert len(editor.edits) == 2  # the fix and its undo, both in the buffer's history
        assert editor.buffers[uri] == UNSAVED
        assert draft.read_text() == ON_DISK


async def test_a_failed_run_answers_error_and_logs_to_the_editor(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor):
        answer = await editor.run("agentd.prompt", {"prompt": "fail at the provider"})
        assert answer["stopReason"] == "error"
        assert any("the request is refused" in line for line in editor.logged)


async def test_edits_before_the_editor_reports_its_changes_build_on_each_other(
    box: Box,
) -> None:
    """An editor that reports ``didChange`` late (Neovim debounces): the second edit reads
    the text the first one wrote, and goes unversioned (the editor's version moved on)."""
    draft = box.project / "draft.py"
    draft.write_text(ON_DISK)
    editor = Editor(change_delay=5.0)
    async with spawn(box, editor):
        uri = editor.open(draft, UNSAVED)
        answer = await editor.run("agentd.prompt", {"prompt": "fix it then undo", "uri": uri})
        assert answer["text"] == "Back as it was."
        first, second = editor.edits
        assert first["documentChanges"][0]["textDocument"]["version"] == 1
        assert second["documentChanges"][0]["textDocument"]["version"] is None
        assert editor.buffers[uri] == UNSAVED
