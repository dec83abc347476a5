"""Cancel: ``$/cancelRequest`` of a running ``agentd.prompt`` and ``agentd.cancel`` both end
the run with ``cancelled``; the session takes the next prompt at once."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.harness import scaled
from tests.lsp.conftest import Box, Editor, spawn

TOKEN = "long-run"


def _tool_started(editor: Editor) -> bool:
    return any("bash: echo started; sleep" in r["message"] for r in editor.reports(TOKEN))


def _prompt_request(
    editor: Editor, msg_id: str, prompt: str = "wait a long time"
) -> asyncio.Future[object]:
    params = types.ExecuteCommandParams(
        command="agentd.prompt",
        arguments=[{"prompt": prompt}],
        work_done_token=TOKEN,
    )
    protocol = editor.client.protocol
    return asyncio.wrap_future(
        protocol.send_request("workspace/executeCommand", params, msg_id=msg_id)
    )


async def test_cancel_request_stops_the_run(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor):
        running = _prompt_request(editor, "prompt-1")
        await editor.wait_for(lambda: _tool_started(editor))
        editor.client.protocol.notify("$/cancelRequest", types.CancelParams(id="prompt-1"))
        with pytest.raises(JsonRpcException) as cancelled:
            await asyncio.wait_for(running, scaled(30))
        assert cancelled.value.code == -32800  # RequestCancelled
        await editor.wait_for(lambda: editor.progress[TOKEN][-1]["kind"] == "end")
        assert editor.progress[TOKEN][-1]["message"] == "cancelled"
        # the run is over: the session answers the next prompt (it is not busy)
        answer = await asyncio.wait_for(
            editor.run("agentd.prompt", {"prompt": "hello world"}), scaled(30)
        )
        assert answer["stopReason"] == "end_turn"


async def test_agentd_cancel_ends_the_prompt_with_cancelled(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor):
        running = _prompt_request(editor, "prompt-2")
        await editor.wait_for(lambda: _tool_started(editor))
        answer = await editor.run("agentd.cancel", {})
        assert answer["cancelled"] is True
        result = await asyncio.wait_for(running, scaled(30))
        assert result["stopReason"] == "cancelled"
        assert editor.progress[TOKEN][-1] == {"kind": "end", "message": "cancelled"}
        idle = await editor.run("agentd.cancel", {"sessionId": result["sessionId"]})
        assert idle == {"sessionId": result["sessionId"], "cancelled": False}


async def test_steer_reaches_the_running_turn(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor):
        running = _prompt_request(editor, "prompt-3", "wait a moment")
        await editor.wait_for(lambda: _tool_started(editor))
        steered = await editor.run("agentd.steer", {"prompt": "also say hi"})
        result = await asyncio.wait_for(running, scaled(60))
        assert result == {
            "sessionId": steered["sessionId"],
            "stopReason": "end_turn",
            "text": "Hi, as steered.",  # the model answered the steering message
        }
    [session_file] = list(box.sessions.rglob("*.jsonl"))
    assert "also say hi" in session_file.read_text()


async def test_a_second_prompt_on_a_running_session_is_busy(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor):
        running = _prompt_request(editor, "prompt-4")
        await editor.wait_for(lambda: _tool_started(editor))
        with pytest.raises(JsonRpcException) as busy:
            await editor.run("agentd.prompt", {"prompt": "hello world"})
        assert busy.value.code == -32002
        assert "agentd.steer" in busy.value.message
        await editor.run("agentd.cancel", {})
        result = await asyncio.wait_for(running, scaled(30))
        assert result["stopReason"] == "cancelled"  # the first run's progress was kept
        assert editor.progress[TOKEN][-1] == {"kind": "end", "message": "cancelled"}


async def test_the_progress_cancel_button_cancels_the_run(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor):
        running = _prompt_request(editor, "prompt-5")
        await editor.wait_for(lambda: _tool_started(editor))
        assert editor.progress[TOKEN][0]["cancellable"] is True
        editor.client.window_work_done_progress_cancel(
            types.WorkDoneProgressCancelParams(token=TOKEN)
        )
        result = await asyncio.wait_for(running, scaled(30))
        assert result["stopReason"] == "cancelled"
