"""The ``todo`` tool through the real daemon and the mock LLM: ``plan_update`` events, the
``plan`` entry in the session file, ``session/state``, replay on load and exports."""

from __future__ import annotations

import json

import pytest

from tests.harness import Home, kinds, new_session, run, stdio_client
from tests.scenarios import PLAN_DONE, PLAN_FIRST

pytestmark = pytest.mark.e2e


def _wire(steps: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{"priority": "medium", **step} for step in steps]


async def test_todo_streams_stores_and_replays_the_plan(home: Home) -> None:
    """Each todo call emits plan_update before its tool_execution_end; the latest plan is
    in session/state, in the file, replayed after the history on load, and in exports."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "work through a plan")
        state = await client.call("session/state", {"sessionId": sid})
    assert result["stopReason"] == "end_turn"
    plans = [e["event"]["entries"] for e in events if e["event"]["type"] == "plan_update"]
    assert plans == [_wire(PLAN_FIRST), _wire(PLAN_DONE)]
    order = kinds(events)
    first_end = next(i for i, e in enumerate(events) if e["event"]["type"] == "tool_execution_end")
    assert order[first_end - 1] == "plan_update"
    ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    assert ends[0]["result"][0]["text"].startswith("Plan recorded (1/3 done):\n[x] Read the parser")
    assert state["plan"] == _wire(PLAN_DONE)
    (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
    stored = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["entries"] for e in stored if e["type"] == "plan"] == plans

    async with stdio_client(home) as client:
        stream = client.raw_events(sid)
        await client.call("session/load", {"sessionId": sid, "replay": True})
        stream.close()
        history = [e async for e in stream]
        markdown = await client.call("session/export", {"sessionId": sid, "format": "markdown"})
        page = await client.call("session/export", {"sessionId": sid, "format": "html"})
    assert history[-1]["event"] == {"type": "plan_update", "entries": _wire(PLAN_DONE)}
    assert "## Plan\n\n- [x] Read the parser\n- [x] Fix the off-by-one" in markdown["content"]
    assert '<ul class="plan"><li>☑ Read the parser</li>' in page["content"]


async def test_bad_plan_is_an_error_result_and_changes_nothing(home: Home) -> None:
    """A step with no text is refused with a clear result; no plan is stored or sent."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "write an empty plan step")
        state = await client.call("session/state", {"sessionId": sid})
    assert "plan_update" not in kinds(events)
    (end,) = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    assert end["isError"]
    assert "Step 2 has no content" in end["result"][0]["text"]
    assert state["plan"] == []
