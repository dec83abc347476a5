"""``agentd acp`` driven by the official ACP Python SDK, as an editor would drive it.

Each test spawns a real ``agentd acp`` process (in-process daemon, the scripted mock LLM over
HTTP, real files and bash in a temp project).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import acp
from tests.acp.conftest import Box, Editor, spawn
from tests.harness import scaled

pytestmark = pytest.mark.e2e


async def test_initialize_advertises_what_agentd_supports(box: Box) -> None:
    editor = Editor()
    argv = box.argv()
    async with acp.spawn_agent_process(editor, argv[0], *argv[1:], env=box.env) as (conn, _):
        reply = await conn.initialize(protocol_version=1)
    assert reply.protocol_version == 1
    caps = reply.agent_capabilities
    assert caps.load_session is True
    assert caps.prompt_capabilities.image is True
    assert caps.prompt_capabilities.embedded_context is True
    assert caps.prompt_capabilities.audio is False
    assert caps.session_capabilities.list is not None
    assert reply.auth_methods == []
    assert reply.agent_info.name == "agentd"


async def test_new_session_offers_modes_and_model(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
    assert session.modes.current_mode_id == "auto"
    assert [m.id for m in session.modes.available_modes] == ["ask", "auto", "read-only"]
    options = {o.id: o for o in session.config_options}
    assert options["mode"].category == "mode"
    assert options["model"].current_value == "mock/mock-model"
    stored = list(Path(box.env["XDG_DATA_HOME"]).rglob(f"*_{session.session_id}.jsonl"))
    assert len(stored) == 1, "an ACP session is a normal agentd session file"


async def test_prompt_with_tool_calls_streams_updates_in_order(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("edit the notes")]
        )
    assert reply.stop_reason == "end_turn"
    notes = box.project / "notes.txt"
    assert notes.read_text() == "one\n2\nthree\n"
    kinds = [k for k in editor.kinds() if k != "available_commands_update"]  # sent on its own
    assert kinds[0] == "agent_thought_chunk"
    assert editor.text("agent_thought_chunk") == "A new file first."
    assert editor.text() == "Writing the notes.Editing them.Notes updated."
    calls = editor.of("tool_call")
    assert [(c.title, c.kind, c.status) for c in calls] == [
        ("Write notes.txt", "edit", "in_progress"),
        ("Edit notes.txt", "edit", "in_progress"),
    ]
    assert calls[0].raw_input == {"path": "notes.txt", "content": "one\ntwo\n"}
    assert calls[0].locations[0].path == str(notes)
    ends = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert [u.tool_call_id for u in ends] == ["call_write", "call_edit"]
    created = ends[0].content[0]
    assert (created.type, created.path, created.old_text, created.new_text) == (
        "diff",
        str(notes),
        None,
        "one\ntwo\n",
    )
    edited = ends[1].content[0]
    assert edited.type == "diff"
    assert (edited.old_text, edited.new_text) == ("one\ntwo\n", "one\n2\nthree\n")
    order = [(u.session_update, getattr(u, "tool_call_id", None)) for _, u in editor.updates]
    assert (
        order.index(("tool_call", "call_write"))
        < order.index(("tool_call_update", "call_write"))
        < order.index(("tool_call", "call_edit"))
    )


async def test_bash_output_is_tool_call_content(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("run the tests")]
        )
    assert reply.stop_reason == "end_turn"
    (call,) = editor.of("tool_call")
    assert (call.title, call.kind) == ("Run echo '3 passed'", "execute")
    final = next(u for u in editor.of("tool_call_update") if u.status == "completed")
    text = final.content[0].content.text
    assert text.startswith("```")
    assert "3 passed" in text


@pytest.mark.parametrize("choice", ["allow_once", "reject_once", "cancelled"])
async def test_permission_in_ask_mode(box: Box, choice: str) -> None:
    editor = Editor(permission=choice)
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        await conn.set_session_mode(session_id=session.session_id, mode_id="ask")
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("write the report")]
        )
    assert reply.stop_reason == ("cancelled" if choice == "cancelled" else "end_turn")
    (tool_call, options) = editor.permission_requests[0]
    assert tool_call.title == "Write report.md"
    assert tool_call.kind == "edit"
    (preview,) = tool_call.content
    assert (preview.type, preview.old_text, preview.new_text) == ("diff", None, "# Report\n")
    assert [o.kind for o in options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    report = box.project / "report.md"
    final = [u for u in editor.of("tool_call_update") if u.status in ("completed", "failed")]
    if choice == "allow_once":
        assert report.read_text() == "# Report\n"
        assert final[0].status == "completed"
    else:
        assert not report.exists()
        assert final[0].status == "failed"
        refused = "cancelled" if choice == "cancelled" else "Permission denied"
        assert refused in final[0].content[0].content.text


async def test_a_cancelled_permission_outcome_cancels_the_turn(box: Box) -> None:
    """ACP's ``cancelled`` outcome means the user cancelled the prompt turn: the turn ends
    ``cancelled`` at once; the second call of the reply is not asked about, nothing runs."""
    editor = Editor(permission="cancelled")
    async with spawn(box, editor, "--permission-mode", "ask") as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await asyncio.wait_for(
            conn.prompt(
                session_id=session.session_id, prompt=[acp.text_block("write two reports")]
            ),
            scaled(20),
        )
        assert reply.stop_reason == "cancelled"
        assert len(editor.permission_requests) == 1
        assert editor.text() == "Writing both."  # no reply to a refusal followed
        again = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
    assert again.stop_reason == "end_turn"
    assert not (box.project / "one.md").exists()
    assert not (box.project / "two.md").exists()


async def test_the_approval_diff_is_the_whole_file(box: Box) -> None:
    """An edit waiting for approval shows oldText/newText of the whole file, not only the
    replaced fragment (editors render it as a file diff)."""
    before = "".join(f"key_{n} = {n}\n" for n in range(8)) + "workers = 2\n" + "tail = 1\n"
    (box.project / "config.toml").write_text(before)
    editor = Editor(permission="allow_once")
    async with spawn(box, editor, "--permission-mode", "ask") as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("tune the config")]
        )
    assert reply.stop_reason == "end_turn"
    (tool_call, _options) = editor.permission_requests[0]
    (diff,) = tool_call.content
    assert diff.type == "diff"
    assert diff.path == str(box.project / "config.toml")
    assert diff.old_text == before
    assert diff.new_text == before.replace("workers = 2", "workers = 8")
    assert (box.project / "config.toml").read_text() == diff.new_text


async def test_read_only_mode_through_config_option(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        changed = await conn.set_config_option(
            session_id=session.session_id, config_id="mode", value="read-only"
        )
        assert {o.id: o.current_value for o in changed.config_options}["mode"] == ("read-only")
        await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("write the report")]
        )
    assert not (box.project / "report.md").exists()
    assert editor.permission_requests == []
    assert editor.of("current_mode_update")[0].current_mode_id == "read-only"


async def test_cancel_mid_stream(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        run = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("stream slowly")])
        )
        await editor.wait_for(lambda: bool(editor.of("agent_message_chunk")))
        await conn.cancel(session_id=session.session_id)
        reply = await asyncio.wait_for(run, scaled(10))
        assert reply.stop_reason == "cancelled"
        assert len(editor.text()) < len("This reply streams one small piece at a time")
        again = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
    assert again.stop_reason == "end_turn"


async def test_cancel_while_a_command_runs(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        run = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("wait a long time")])
        )
        await editor.wait_for(lambda: "started" in str(editor.of("tool_call_update")))
        await conn.cancel(session_id=session.session_id)
        reply = await asyncio.wait_for(run, scaled(10))
    assert reply.stop_reason == "cancelled"
    last = editor.of("tool_call_update")[-1]
    assert last.status == "failed"
    shown = last.content[0].content.text  # what the command printed is kept
    assert "started" in shown
    assert "cancelled" in shown


async def test_cancel_while_permission_is_pending(box: Box) -> None:
    editor = Editor(permission="wait")
    async with spawn(box, editor, "--permission-mode", "ask") as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        run = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("write the report")])
        )
        await editor.wait_for(lambda: bool(editor.permission_requests))
        await conn.cancel(session_id=session.session_id)
        reply = await asyncio.wait_for(run, scaled(10))
    assert reply.stop_reason == "cancelled"
    assert not (box.project / "report.md").exists()


async def test_load_replays_history_and_continues(box: Box) -> None:
    first = Editor()
    async with spawn(box, first) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("edit the notes")])
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        loaded = await conn.load_session(cwd=str(box.project), session_id=session.session_id)
        assert loaded.modes.current_mode_id == "auto"
        replayed = list(editor.updates)
        assert editor.text("user_message_chunk") == "edit the notes"
        assert editor.text() == "Writing the notes.Editing them.Notes updated."
        assert [c.title for c in editor.of("tool_call")] == ["Write notes.txt", "Edit notes.txt"]
        diffs = [u.content[0] for u in editor.of("tool_call_update")]
        assert [d.type for d in diffs] == ["diff", "diff"]
        assert diffs[1].new_text == "one\n2\nthree\n"
        reply = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
    assert reply.stop_reason == "end_turn"
    assert editor.updates[: len(replayed)] == replayed


async def test_list_resume_and_close(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        one = await conn.new_session(cwd=str(box.project))
        await conn.prompt(session_id=one.session_id, prompt=[acp.text_block("hi")])
        listed = await conn.list_sessions(cwd=str(box.project))
        assert one.session_id in [s.session_id for s in listed.sessions]
        assert listed.sessions[0].cwd == str(box.project)
        await conn.close_session(session_id=one.session_id)
        with pytest.raises(acp.RequestError) as closed:
            await conn.prompt(session_id=one.session_id, prompt=[acp.text_block("hi")])
        assert closed.value.code == -32002
        before = len(editor.updates)
        await conn.resume_session(cwd=str(box.project), session_id=one.session_id)
        assert len(editor.updates) == before, "resume does not replay"
        reply = await conn.prompt(session_id=one.session_id, prompt=[acp.text_block("hi")])
    assert reply.stop_reason == "end_turn"


async def test_fs_capability_reads_and_writes_through_the_editor(box: Box) -> None:
    draft = box.project / "draft.txt"
    draft.write_text("saved text\n")
    editor = Editor(fs=True, buffers={str(draft): "an unsaved typo\n"})
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=[acp.text_block("read the draft")])
        shown = editor.of("tool_call_update")[-1].content[0].content.text
        assert "an unsaved typo" in shown
        assert "saved text" not in shown
        await conn.prompt(session_id=sid, prompt=[acp.text_block("fix the draft")])
        assert editor.buffers[str(draft)] == "an unsaved fix\n"
        await conn.prompt(session_id=sid, prompt=[acp.text_block("write the report")])
    assert str(draft) in editor.reads
    assert (str(box.project / "report.md"), "# Report\n") in editor.writes
    assert draft.read_text() == "saved text\n", "the editor, not the daemon, owns the file"
    assert not (box.project / "report.md").exists()


@pytest.mark.parametrize(
    ("prompt", "stop"),
    [("talk too long", "max_tokens"), ("something forbidden", "refusal")],
)
async def test_stop_reasons(box: Box, prompt: str, stop: str) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(prompt)])
    assert reply.stop_reason == stop


async def test_max_turn_requests(box: Box) -> None:
    box.write_config("max_turns = 2\n")
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("edit the notes")]
        )
    assert reply.stop_reason == "max_turn_requests"


async def test_failed_run_is_an_error_answer(box: Box) -> None:
    box.write_config("[retry]\nmax_attempts = 1\n")
    editor = Editor()
    async with spawn(box, editor) as (conn, process):
        session = await conn.new_session(cwd=str(box.project))
        with pytest.raises(acp.RequestError) as failed:
            await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("fail please")])
        assert failed.value.code == -32603
        assert "the mock refuses this request" in str(failed.value)
        reply = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")])
        assert reply.stop_reason == "end_turn"
        assert process.returncode is None


async def test_prompt_with_resources_and_images(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor) as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id,
            prompt=[
                acp.text_block("look at these"),
                acp.resource_link_block(name="app.py", uri=f"file://{box.project}/app.py"),
                acp.resource_block(
                    acp.embedded_text_resource(f"file://{box.project}/b.py", "print(1)\n")
                ),
                acp.image_block(data="iVBORw0KGgo=", mime_type="image/png"),
            ],
        )
    assert reply.stop_reason == "end_turn"
    stored = next(Path(box.env["XDG_DATA_HOME"]).rglob(f"*_{session.session_id}.jsonl"))
    text = stored.read_text()
    assert f"Referenced: {box.project}/app.py" in text
    assert f'<file path=\\"{box.project}/b.py\\">' in text
    assert "image/png" in text


async def test_an_editor_that_serves_files_sees_a_new_file_as_new(box: Box) -> None:
    """With the editor serving files (it refuses to read a file that does not exist), the
    approval of a write that creates a file shows the new file, not a read error."""
    editor = Editor(fs=True, permission="allow_once")
    async with spawn(box, editor, "--permission-mode", "ask") as (conn, _):
        session = await conn.new_session(cwd=str(box.project))
        reply = await conn.prompt(
            session_id=session.session_id, prompt=[acp.text_block("write the report")]
        )
    assert reply.stop_reason == "end_turn"
    (diff,) = editor.permission_requests[0][0].content
    assert (diff.type, diff.old_text, diff.new_text) == ("diff", None, "# Report\n")
    assert str(box.project / "report.md") not in editor.reads
