"""``session/rewind`` through a real daemon, the real mock LLM, real bash and real files:
writes, edits and bash-created files restored or removed, two rewinds in a row, a rewind
after a daemon restart, the refusal while a run is active (conflicts:
``test_rewind_conflicts_e2e``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentd.errors import InvalidParams, RpcError, SessionBusy
from tests.harness import (
    Home,
    drain,
    new_session,
    run,
    socket_client,
    start_run,
    stdio_client,
    stop,
)
from tests.rewind.scenarios import KEEP_BEFORE

pytestmark = pytest.mark.e2e


def _entries(home: Home, sid: str) -> list[dict[str, Any]]:
    (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


async def _two_turns(client: Any, home: Home) -> str:
    (home.project / "keep.txt").write_text(KEEP_BEFORE)
    sid = await new_session(client, home)
    for text in ("rewind turn one", "rewind turn two"):
        result, _ = await run(client, sid, text)
        assert result["stopReason"] == "end_turn"
    return sid


async def test_rewind_restores_writes_edits_and_bash_files(home: Home) -> None:
    """Rewinding both turns puts keep.txt back, removes a.txt and what bash created; the
    conversation goes back to empty and the discarded turns stay in the file."""
    project = home.project
    async with stdio_client(home) as client:
        sid = await _two_turns(client, home)
        assert (project / "a.txt").read_text() == "two\n"
        assert (project / "keep.txt").read_text() == "kept twice line\nx\n"
        assert (project / "sub" / "deep.txt").exists()
        changed = [e for e in _entries(home, sid) if e["type"] == "file_changes"]
        paths = {c["path"] for e in changed for c in e["changes"]}
        assert {str(project / n) for n in ("a.txt", "keep.txt", "made.txt")} <= paths
        stream = client.raw_events(sid)
        result = await client.call("session/rewind", {"sessionId": sid, "turns": 2})
        (told,) = [e["event"] for e in await drain(stream, until="session_rewound")]
        stream.close()
        state = await client.call("session/state", {"sessionId": sid})
        messages = await client.call("session/messages", {"sessionId": sid})
    assert told == {
        "type": "session_rewound",
        "leafId": result["leafId"],
        "prompt": "rewind turn one",
    }
    assert result["prompt"] == "rewind turn one"
    assert result["leafId"] is not None  # the rewind entry, child of the start
    assert sorted(result["restored"]) == [str(project / "keep.txt")]
    removed = {str(project / n) for n in ("a.txt", "made.txt", "sub/deep.txt")}
    assert set(result["removed"]) == removed
    assert result["conflicts"] == []
    assert (project / "keep.txt").read_text() == KEEP_BEFORE
    assert not (project / "a.txt").exists()
    assert not (project / "made.txt").exists()
    assert not (project / "sub" / "deep.txt").exists()
    assert state["messageCount"] == 0
    assert messages["messages"] == []
    entries = _entries(home, sid)
    first_prompt = next(e for e in entries if e["type"] == "message")
    assert entries[-1]["type"] == "rewind"
    assert entries[-1]["parentId"] == first_prompt["parentId"]  # the settings stay
    assert sum(e["type"] == "message" for e in entries) >= 4  # the turns stay in the file


async def test_rewind_twice_one_turn_each(home: Home) -> None:
    """One turn back, then one more: each rewind restores exactly its turn's changes."""
    project = home.project
    async with stdio_client(home) as client:
        sid = await _two_turns(client, home)
        first = await client.call("session/rewind", {"sessionId": sid})
        assert first["prompt"] == "rewind turn two"
        assert (project / "a.txt").read_text() == "one\n"
        assert (project / "keep.txt").read_text() == "kept line\n"
        assert (project / "made.txt").exists()
        assert not (project / "sub/deep.txt").exists()
        assert first["removed"] == [str(project / "sub/deep.txt")]
        state = await client.call("session/state", {"sessionId": sid})
        assert state["messageCount"] > 0
        second = await client.call("session/rewind", {"sessionId": sid, "turns": 1})
        state = await client.call("session/state", {"sessionId": sid})
    assert second["prompt"] == "rewind turn one"
    assert second["conflicts"] == []
    assert (project / "keep.txt").read_text() == KEEP_BEFORE
    assert not (project / "a.txt").exists()
    assert not (project / "made.txt").exists()
    assert state["messageCount"] == 0


async def test_rewind_after_a_daemon_restart(home: Home) -> None:
    """What the runs changed is in the session file: a new daemon rewinds it, and the moved
    leaf is still there after yet another restart."""
    project = home.project
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await _two_turns(client, home)
    finally:
        stop(daemon)
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            result = await client.call("session/rewind", {"sessionId": sid, "turns": 2})
    finally:
        stop(daemon)
    assert result["conflicts"] == []
    assert (project / "keep.txt").read_text() == KEEP_BEFORE
    assert not (project / "a.txt").exists()
    async with stdio_client(home) as client:
        await client.call("session/load", {"sessionId": sid})
        state = await client.call("session/state", {"sessionId": sid})
    assert state["messageCount"] == 0


async def test_refused_while_a_run_is_active(home: Home) -> None:
    """While a run is active session/rewind is SessionBusy (-32002) and changes nothing."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "rewind turn one")
        stream, prompt = await start_run(
            client, sid, "rewind while sleeping", until="tool_execution_start"
        )
        try:
            with pytest.raises(RpcError) as refused:
                await client.call("session/rewind", {"sessionId": sid})
        finally:
            await client.call("session/cancel", {"sessionId": sid})
            await prompt
            stream.close()
    assert refused.value.code == SessionBusy.code
    assert "cannot rewind" in refused.value.message
    assert (home.project / "a.txt").read_text() == "one\n"


async def test_bad_targets_are_clear_errors(home: Home) -> None:
    """More turns than prompts, an entry that is no prompt, both at once: InvalidParams."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "rewind turn one")
        tries = [{"turns": 5}, {"entryId": "nope"}, {"turns": 1, "entryId": "x"}, {"turns": 0}]
        for extra in tries:
            with pytest.raises(RpcError) as refused:
                await client.call("session/rewind", {"sessionId": sid, **extra})
            assert refused.value.code == InvalidParams.code, extra
    assert (home.project / "a.txt").read_text() == "one\n"


async def test_files_false_moves_only_the_conversation(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "rewind turn one")
        result = await client.call("session/rewind", {"sessionId": sid, "files": False})
        state = await client.call("session/state", {"sessionId": sid})
    assert result["restored"] == result["removed"] == []
    assert state["messageCount"] == 0
    assert (home.project / "a.txt").read_text() == "one\n"


async def test_dry_run_says_what_would_happen_and_changes_nothing(home: Home) -> None:
    """dryRun lists the files a rewind would restore, remove and leave alone; the files, the
    conversation and the session file stay as they were."""
    project = home.project
    async with stdio_client(home) as client:
        sid = await _two_turns(client, home)
        lines_before = len(_entries(home, sid))
        preview = await client.call("session/rewind", {"sessionId": sid, "dryRun": True})
        state = await client.call("session/state", {"sessionId": sid})
        assert (project / "sub/deep.txt").exists()
        assert (project / "a.txt").read_text() == "two\n"
        assert len(_entries(home, sid)) == lines_before
        real = await client.call("session/rewind", {"sessionId": sid})
    assert preview["prompt"] == "rewind turn two"
    assert preview["removed"] == [str(project / "sub/deep.txt")]
    assert sorted(preview["restored"]) == sorted(real["restored"])
    assert len(_entries(home, sid)) == lines_before + 1  # only the real rewind wrote
    assert state["messageCount"] > 0


async def test_undo_edit_forgets_what_a_rewind_took_back(home: Home) -> None:
    """After a rewind, undo_edit has nothing of the rewound file to undo: its snapshots were
    of the discarded turns (and would put their content back)."""
    async with stdio_client(home) as client:
        sid = await _two_turns(client, home)
        await client.call("session/rewind", {"sessionId": sid})
        _, events = await run(client, sid, "rewind then undo")
    (end,) = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    assert end["isError"]
    assert "There is no write or edit of a.txt to undo" in end["result"][0]["text"]
    assert (home.project / "a.txt").read_text() == "one\n"


async def test_an_undo_edit_is_rewound_too(home: Home) -> None:
    """undo_edit's change is recorded like any other: a run that undid turn one's write
    (deleting a.txt) is rewound by putting a.txt back."""
    project = home.project
    (project / "keep.txt").write_text(KEEP_BEFORE)
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "rewind turn one")
        await run(client, sid, "rewind then undo")
        assert not (project / "a.txt").exists()
        result = await client.call("session/rewind", {"sessionId": sid})
    assert result["restored"] == [str(project / "a.txt")]
    assert (project / "a.txt").read_text() == "one\n"


async def test_a_custom_command_is_offered_as_typed(home: Home) -> None:
    """Rewinding over a custom command answers the command the user typed, not its
    expansion (clients put it back in the message box)."""
    commands = home.config_dir / "agentd" / "commands"
    commands.mkdir(parents=True)
    (commands / "again.md").write_text("---\ndescription: the first turn\n---\nrewind turn one\n")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, _ = await run(client, sid, "/again")
        assert result["stopReason"] == "end_turn"
        rewound = await client.call("session/rewind", {"sessionId": sid})
    assert rewound["prompt"] == "/again"
    assert not (home.project / "a.txt").exists()
