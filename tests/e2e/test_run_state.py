"""What a session is doing and who owns its context, through a real daemon and the mock LLM:
the run phase in ``session/state``, a reply cut off at ``max_tokens``, the working directory
that the tool calls of one reply share."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentd.agent.scheduling import CUT_OFF
from agentd.errors import RpcError
from tests.e2e.test_tools import add_scenarios
from tests.harness import Home, drain, new_session, run, start_run, stdio_client, wait_until_async

pytestmark = pytest.mark.e2e


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {"id": call_id, "type": "function", "function": function}


def _ends(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]


@pytest.mark.parametrize("mode", ["auto", "ask"])
async def test_a_reply_cut_off_at_max_tokens_fails_its_tool_calls(home: Home, mode: str) -> None:
    """The provider reports the ``length`` stop: neither call runs (no file written, no
    command run) nor is offered for approval, each ends with the cut-off error the model then
    reads, and the run goes on to the model's next reply."""
    calls = [
        _call("call_w", "write", {"path": "note.txt", "content": "half a file"}),
        _call("call_b", "bash", {"command": "touch ran.txt"}),
    ]
    cut = {"stop": "length", "content": "Writing both.", "tool_calls": calls}
    steps = [{"response": cut}, {"response": {"content": "Called again."}}]
    add_scenarios(home, {"name": "cut off", "trigger": "cut me off", "steps": steps})
    async with stdio_client(home) as client:
        sid = await new_session(client, home, permissionMode=mode)
        result, events = await run(client, sid, "cut me off")
        messages = (await client.call("session/messages", {"sessionId": sid}))["messages"]
    assert result["stopReason"] == "end_turn"
    assert not (home.project / "note.txt").exists()
    assert not (home.project / "ran.txt").exists()
    ends = _ends(events)
    assert [(e["toolCallId"], e["isError"]) for e in ends] == [("call_w", True), ("call_b", True)]
    assert all(e["result"][0]["text"] == CUT_OFF for e in ends)
    assert not [e for e in events if e["event"]["type"] == "permission_request"]
    assert result["permissionsRefused"] == []
    replies = [m for m in messages if m["role"] == "assistant"]
    assert [m.get("stopReason", "stop") for m in replies] == ["length", "stop"]
    seen = [m for m in messages if m["role"] == "tool_result"]
    assert [m["content"][0]["text"] for m in seen] == [CUT_OFF, CUT_OFF]
    assert replies[-1]["content"][0]["text"] == "Called again."


async def test_session_state_reports_the_run_phase(home: Home) -> None:
    """``phase`` is ``running`` while a reply streams and ``idle`` once the run is over."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        idle = await client.call("session/state", {"sessionId": sid})
        stream, prompt = await start_run(client, sid, "take a moment", until="message_update")
        during = await client.call("session/state", {"sessionId": sid})
        await prompt
        await drain(stream, until="agent_end")
        stream.close()
        after = await client.call("session/state", {"sessionId": sid})
    assert (idle["phase"], idle["status"]) == ("idle", "idle")
    assert (during["phase"], during["status"]) == ("running", "running")
    assert (after["phase"], after["status"]) == ("idle", "idle")


async def test_a_manual_compaction_is_a_phase_that_keeps_the_session_busy(home: Home) -> None:
    """While ``session/compact`` waits for a slow summary the phase is ``compacting``: a
    prompt is refused as busy and ``session/list`` shows the session running; afterwards
    the session is idle and takes prompts again."""
    slow = {"delay_ms": 1500, "response": {"content": "- the user asked for a slow summary"}}
    add_scenarios(home, {"name": "slow summary", "trigger": "slow summary", "steps": [slow]})
    with (home.project / ".agentd.toml").open("a") as config:
        config.write("[compaction]\nkeep_tokens = 1\n")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "a slow summary, later")
        await run(client, sid, "hello world")
        compact = asyncio.create_task(client.call("session/compact", {"sessionId": sid}))

        async def phase() -> str:
            return str((await client.call("session/state", {"sessionId": sid}))["phase"])

        async def compacting() -> bool:
            return await phase() == "compacting"

        await wait_until_async(compacting, what="the compacting phase", interval=0.05)
        with pytest.raises(RpcError) as busy:
            await client.call("session/prompt", {"sessionId": sid, "text": "hello world"})
        listed = await client.call("session/list", {})
        result = await compact
        after = await phase()
        again, _ = await run(client, sid, "how are you")
    assert busy.value.code == -32002
    assert "compacting" in busy.value.message
    assert [s["running"] for s in listed["sessions"] if s["sessionId"] == sid] == [True]
    assert result["compacted"] is True
    assert after == "idle"
    assert again["stopReason"] == "end_turn"


async def test_a_cd_carries_over_to_the_next_calls_of_the_same_reply(home: Home) -> None:
    """The calls of one reply share the session's working directory: the bash call and the
    ls after a ``cd`` start in the new directory, and the ls (which ran with it) does not put
    the old one back for the next reply."""
    (home.project / "sub").mkdir()
    (home.project / "sub" / "inner.txt").write_text("x\n")
    first = [
        _call("call_cd", "bash", {"command": "cd sub"}),
        _call("call_pwd", "bash", {"command": "pwd"}),
        _call("call_ls", "ls", {"path": "."}),
    ]
    steps = [
        {"response": {"content": "Moving.", "tool_calls": first}},
        *[{"response": {"content": "(not reached)"}}] * 2,  # the step is the result count
        {
            "response": {
                "content": "Where?",
                "tool_calls": [_call("call_pwd2", "bash", {"command": "pwd"})],
            }
        },
        {"response": {"content": "Done."}},
    ]
    add_scenarios(home, {"name": "cd", "trigger": "move into sub", "steps": steps})
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "move into sub")
    assert result["stopReason"] == "end_turn"
    by_id = {e["toolCallId"]: e["result"][0]["text"] for e in _ends(events)}
    sub = str((home.project / "sub").resolve())
    assert by_id["call_pwd"].splitlines()[0] == sub
    assert "inner.txt" in by_id["call_ls"]
    assert by_id["call_pwd2"].splitlines()[0] == sub
