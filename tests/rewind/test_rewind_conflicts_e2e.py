"""A rewind that meets conflicts, through a real daemon, the real mock LLM and real files: it
moves nothing (neither the conversation nor a file, nor the session file) unless ``force``,
and ``force`` applies it to the same prompt; a file a bash command made too large to keep
blocks it the same way; what agentd's own ``post_tool`` hook (a formatter) changed is the
run's change, restored without a conflict."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.harness import Home, new_session, run, stdio_client
from tests.rewind.scenarios import KEEP_BEFORE

pytestmark = pytest.mark.e2e

FORMATTER = """#!/usr/bin/env bash
# a formatter hook: squeeze runs of spaces and strip trailing ones in the file just written
path=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["args"]["path"])')
sed -i -e 's/  */ /g' -e 's/ *$//' "$path"
exit 0
"""


def _lines(home: Home, sid: str) -> list[str]:
    (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
    return path.read_text().splitlines()


async def _two_turns(client: Any, home: Home) -> str:
    (home.project / "keep.txt").write_text(KEEP_BEFORE)
    sid = await new_session(client, home)
    for text in ("rewind turn one", "rewind turn two"):
        result, _ = await run(client, sid, text)
        assert result["stopReason"] == "end_turn"
    return sid


async def test_a_conflict_moves_nothing_until_forced_on_the_same_prompt(home: Home) -> None:
    """a.txt changed by hand: the rewind lists it, moves neither the conversation nor
    keep.txt nor sub/deep.txt, writes nothing to the session file; ``force`` then rewinds
    the same prompt (not one more) and restores a.txt too."""
    project = home.project
    async with stdio_client(home) as client:
        sid = await _two_turns(client, home)
        (project / "a.txt").write_text("mine now\n")
        state_before = await client.call("session/state", {"sessionId": sid})
        lines_before = _lines(home, sid)
        stopped = await client.call("session/rewind", {"sessionId": sid})
        state_after = await client.call("session/state", {"sessionId": sid})
        assert stopped["applied"] is False
        assert stopped["prompt"] == "rewind turn two"
        (conflict,) = stopped["conflicts"]
        assert conflict["path"] == str(project / "a.txt")
        assert conflict["reason"] == "changed"
        assert sorted(stopped["restored"]) == [str(project / "keep.txt")]  # would restore
        assert (project / "a.txt").read_text() == "mine now\n"
        assert (project / "keep.txt").read_text() == "kept twice line\nx\n"
        assert (project / "sub" / "deep.txt").exists()
        assert _lines(home, sid) == lines_before
        assert state_after["messageCount"] == state_before["messageCount"]

        forced = await client.call("session/rewind", {"sessionId": sid, "force": True})
        state = await client.call("session/state", {"sessionId": sid})
    assert forced["applied"] is True
    assert forced["prompt"] == "rewind turn two"
    assert forced["entryId"] == stopped["entryId"]
    assert forced["conflicts"] == []
    assert sorted(forced["restored"]) == [str(project / "a.txt"), str(project / "keep.txt")]
    assert (project / "a.txt").read_text() == "one\n"  # turn one's content, not removed
    assert (project / "keep.txt").read_text() == "kept line\n"
    assert not (project / "sub" / "deep.txt").exists()
    assert 0 < state["messageCount"] < state_before["messageCount"]


async def test_forcing_the_entry_id_of_a_stopped_rewind(home: Home) -> None:
    """The stopped result's ``entryId`` names the prompt; forcing by it rewinds exactly it."""
    project = home.project
    async with stdio_client(home) as client:
        sid = await _two_turns(client, home)
        (project / "a.txt").write_text("mine now\n")
        stopped = await client.call("session/rewind", {"sessionId": sid, "turns": 2})
        assert stopped["applied"] is False
        assert stopped["prompt"] == "rewind turn one"
        forced = await client.call(
            "session/rewind", {"sessionId": sid, "entryId": stopped["entryId"], "force": True}
        )
        state = await client.call("session/state", {"sessionId": sid})
    assert forced["applied"] is True
    assert forced["prompt"] == "rewind turn one"
    assert not (project / "a.txt").exists()
    assert (project / "keep.txt").read_text() == KEEP_BEFORE
    assert state["messageCount"] == 0


async def test_a_file_too_large_to_keep_blocks_until_forced(home: Home) -> None:
    """A file bash made larger than the per-file cap cannot be restored: the rewind stops
    on it; forced, the conversation goes back and the file is left (and listed)."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "rewind a big file")
        stopped = await client.call("session/rewind", {"sessionId": sid})
        state = await client.call("session/state", {"sessionId": sid})
        assert stopped["applied"] is False
        assert state["messageCount"] > 0
        forced = await client.call("session/rewind", {"sessionId": sid, "force": True})
        state = await client.call("session/state", {"sessionId": sid})
    for result in (stopped, forced):
        (conflict,) = result["conflicts"]
        assert conflict["reason"] == "not_restorable"
        assert "cap" in conflict["message"]
    assert forced["applied"] is True
    assert state["messageCount"] == 0
    assert (home.project / "big.bin").exists()


async def test_a_dry_run_is_never_applied(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await _two_turns(client, home)
        preview = await client.call("session/rewind", {"sessionId": sid, "dryRun": True})
        conversation = await client.call(
            "session/rewind", {"sessionId": sid, "dryRun": True, "files": False}
        )
        real = await client.call("session/rewind", {"sessionId": sid})
    assert preview["applied"] is False
    assert conversation["applied"] is False
    assert preview["entryId"] == conversation["entryId"] == real["entryId"]
    assert real["applied"] is True


async def test_a_formatter_hooks_changes_are_the_runs_not_conflicts(home: Home) -> None:
    """A ``post_tool`` hook reformats each file the agent writes or edits (as the hooks
    page's formatter does): the rewind removes the written file and puts the edited one
    back, with no conflict."""
    project = home.project
    hook = project / ".agentd" / "hooks" / "format"
    hook.parent.mkdir(parents=True)
    hook.write_text(FORMATTER)
    hook.chmod(0o755)
    home.project_config(
        tables='\n[[hooks.post_tool]]\nmatcher = "write|edit"\ncommand = ".agentd/hooks/format"\n'
    )
    (project / "style.py").write_text("y = 0\n")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "rewind a formatted write")
        assert result["stopReason"] == "end_turn"
        assert (project / "fmt.py").read_text() == "x = 1\n"  # the hook ran
        assert (project / "style.py").read_text() == "y = 5\n"
        rewound = await client.call("session/rewind", {"sessionId": sid})
    hooks = [e["event"] for e in events if e["event"]["type"] == "hook_result"]
    assert [h["event"] for h in hooks] == ["post_tool", "post_tool"], json.dumps(hooks)
    assert rewound["conflicts"] == []
    assert rewound["applied"] is True
    assert rewound["removed"] == [str(project / "fmt.py")]
    assert rewound["restored"] == [str(project / "style.py")]
    assert not (project / "fmt.py").exists()
    assert (project / "style.py").read_text() == "y = 0\n"
