"""Several mutating tool calls in one reply run one at a time, in the model's order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.test_tools import add_scenarios
from tests.harness import Home, new_session, run, stdio_client

pytestmark = pytest.mark.e2e

FILLER = "filler line that makes the file big enough for the edits to overlap\n" * 30_000


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {"id": f"call_{n}", "type": "function", "function": function}


def edits_scenario(trigger: str, count: int) -> dict[str, Any]:
    """Read ``big.txt``, then ``count`` edits of it in one reply, then a closing reply."""
    read = {
        "response": {
            "content": "Reading.",
            "tool_calls": [_call(0, "read", {"path": "big.txt", "limit": 5})],
        }
    }
    edits = [
        _call(
            n,
            "edit",
            {"path": "big.txt", "old_string": f"marker {n}\n", "new_string": f"EDITED {n}\n"},
        )
        for n in range(1, count + 1)
    ]
    steps = [read, {"response": {"content": "Editing.", "tool_calls": edits}}]
    return {
        "name": trigger,
        "trigger": trigger,
        "steps": [*steps, {"response": {"content": "Done."}}],
    }


@pytest.mark.parametrize("count", [2, 5])
async def test_every_edit_of_one_file_in_one_reply_lands(home: Home, count: int) -> None:
    markers = "".join(f"marker {n}\n" for n in range(1, count + 1))
    (home.project / "big.txt").write_text(markers + FILLER)
    trigger = f"make {count} edits"
    add_scenarios(home, edits_scenario(trigger, count))
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, trigger)
    assert result["stopReason"] == "end_turn"
    ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    edit_ends = [e for e in ends if e["name"] == "edit"]
    assert [e.get("isError", False) for e in edit_ends] == [False] * count
    text = (home.project / "big.txt").read_text()
    assert text == "".join(f"EDITED {n}\n" for n in range(1, count + 1)) + FILLER
