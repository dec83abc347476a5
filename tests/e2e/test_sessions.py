"""Sessions through the real daemon: persistence, crash recovery, replay, fork, branch."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import time

import pytest

from agentctl.client import spawn_stdio
from agentd.errors import RpcError
from tests.harness import (
    Home,
    drain,
    kinds,
    new_session,
    run,
    socket_client,
    start_run,
    stdio_client,
    stop,
    wait_for_file,
    wait_until_async,
)

pytestmark = pytest.mark.e2e


def session_lines(home: Home, sid: str) -> list[dict[str, object]]:
    (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_header_is_written_at_session_new_and_zero_turn_session_resumes(home: Home) -> None:
    """A new session is on disk at once and can be prompted after a daemon restart."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home, sessionId="fresh-1", title="First")
    assert session_lines(home, sid)[0]["type"] == "session"
    async with stdio_client(home) as client:
        result, _ = await run(client, sid, "how are you")
        listed = await client.call("session/list", {"cwd": str(home.project)})
    assert result["stopReason"] == "end_turn"
    assert listed["sessions"][0]["sessionId"] == sid
    assert listed["sessions"][0]["title"] == "First"


async def test_caller_chosen_ids_must_be_unique(home: Home) -> None:
    async with stdio_client(home) as client:
        await new_session(client, home, sessionId="same")
        with pytest.raises(RpcError) as dup:
            await new_session(client, home, sessionId="same")
    assert dup.value.code == -32006


async def test_concurrent_creates_of_one_id_in_one_daemon_give_one_session(home: Home) -> None:
    """Pipelined session/new requests naming the same id: one wins, the others get -32006,
    and only one file exists."""
    async with stdio_client(home) as client:
        answers = await asyncio.gather(
            *(new_session(client, home, sessionId="twin") for _ in range(4)),
            return_exceptions=True,
        )
        status = await client.call("daemon/status")
    refused = [a for a in answers if isinstance(a, RpcError)]
    assert answers.count("twin") == 1
    assert [e.code for e in refused] == [-32006] * 3
    assert status["sessions"].count("twin") == 1
    assert len(list(home.sessions.glob("*/*_twin.jsonl"))) == 1


async def test_list_says_which_sessions_are_loaded_and_running(home: Home) -> None:
    """session/list marks sessions loaded in this daemon, and those with a run going."""
    async with stdio_client(home) as client:
        busy, idle, closed = [await new_session(client, home) for _ in range(3)]
        await client.call("session/close", {"sessionId": closed})
        _, prompt = await start_run(client, busy, "be slow", until="agent_start")
        listed = (await client.call("session/list", {"cwd": str(home.project)}))["sessions"]
        await client.call("session/cancel", {"sessionId": busy})
        await prompt
        after = (await client.call("session/list", {"cwd": str(home.project)}))["sessions"]
    state = {s["sessionId"]: (s.get("loaded", False), s.get("running", False)) for s in listed}
    assert state == {busy: (True, True), idle: (True, False), closed: (False, False)}
    assert {s["sessionId"]: s.get("running", False) for s in after}[busy] is False


async def test_sigkill_mid_turn_then_resume_keeps_every_completed_entry(home: Home) -> None:
    """SIGKILL during a bash call: on restart the session loads, the dangling call gets an
    interrupted result, and the conversation continues."""
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            await run(client, sid, "how are you")
            mark = home.project / "bash-started"
            _, pending = await start_run(
                client, sid, "nap in bash after a mark", until="tool_execution_start"
            )
            await wait_for_file(mark)  # bash runs the command now
            stop(daemon, signal.SIGKILL)
            with pytest.raises(RpcError):
                await pending
    finally:
        stop(daemon)
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            loaded = await client.call("session/load", {"sessionId": sid})
            messages = (await client.call("session/messages", {"sessionId": sid}))["messages"]
            result, _ = await run(client, sid, "how are you")
    finally:
        stop(daemon)
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "user", "assistant", "tool_result"]
    assert "interrupted" in messages[-1]["content"][0]["text"]
    assert loaded["messageCount"] == 5
    assert result["stopReason"] == "end_turn"


async def test_reconnect_with_since_seq_gets_exactly_the_missed_events(home: Home) -> None:
    """Two clients watch one session; one leaves mid-run and catches up from its last seq."""
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as owner:
            sid = await new_session(owner, home)
            owner_stream = owner.raw_events(sid)
            async with socket_client(home) as watcher:
                await watcher.call("session/subscribe", {"sessionId": sid})
                seen = watcher.raw_events(sid)
                prompt = asyncio.create_task(
                    owner.call("session/prompt", {"sessionId": sid, "text": "hello world"})
                )
                first = await drain(seen, until="tool_execution_start")
            last_seq = first[-1]["seq"]
            await prompt
            everything = await drain(owner_stream, until="agent_end")
            async with socket_client(home) as again:
                missed = again.raw_events(sid)
                sub = await again.call(
                    "session/subscribe", {"sessionId": sid, "sinceSeq": last_seq}
                )
                replay = await drain(missed, until="agent_end")
    finally:
        stop(daemon)
    expected = [e for e in everything if e["seq"] > last_seq]
    assert sub["complete"] is True
    assert sub["replayed"] == len(expected)
    assert [e["seq"] for e in replay] == [e["seq"] for e in expected]
    assert replay == expected


def add_flood_scenario(home: Home) -> None:
    """Prompting "flood" streams a reply in about 6,000 text deltas."""
    scenarios = json.loads((home.root / "scenarios.json").read_text())
    reply = {"content": "The quick brown fox runs ", "content_repeat": 1200}
    scenarios["scenarios"].insert(
        0, {"name": "flood", "trigger": "flood", "steps": [{"response": reply, "chunk_size": 5}]}
    )
    (home.root / "scenarios.json").write_text(json.dumps(scenarios))


async def test_run_outlives_its_client_and_old_seqs_ask_for_a_resync(home: Home) -> None:
    """The prompting client hangs up mid-run and the run still completes; a later subscriber
    whose sinceSeq fell out of the replay buffer is told so; unsubscribe stops the events."""
    add_flood_scenario(home)
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as owner:
            sid = await new_session(owner, home)
            _, prompt = await start_run(owner, sid, "flood", until="message_update")
        await asyncio.gather(prompt, return_exceptions=True)
        async with socket_client(home) as late:

            async def ended() -> bool:
                state = await late.call("session/state", {"sessionId": sid})
                return bool(state["status"] != "running")

            await wait_until_async(ended, 15, "the run to end", 0.05)
            events = late.raw_events(sid)
            sub = await late.call("session/subscribe", {"sessionId": sid, "sinceSeq": 1})
            end = (await drain(events, until="agent_end"))[-1]
            messages = (await late.call("session/messages", {"sessionId": sid}))["messages"]
            assert (await late.call("session/unsubscribe", {"sessionId": sid}))["ok"] is True
            async with socket_client(home) as other:
                await run(other, sid, "how are you")
            events.close()
            after = [e async for e in events]
    finally:
        stop(daemon)
    assert sub["complete"] is False
    assert 0 < sub["replayed"] <= 4096
    assert end["seq"] > 6000
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[-1]["content"][0]["text"] == "The quick brown fox runs " * 1200
    assert after == []


async def test_session_dir_load_by_path_and_reload_of_a_loaded_session(home: Home) -> None:
    """--session-dir moves the store; session/load takes a path; loading a loaded session
    only subscribes (its seq goes on, nothing is read again)."""
    store = home.root / "elsewhere"
    client = await spawn_stdio(
        args=["--session-dir", str(store)], env=home.env, cwd=str(home.project)
    )
    try:
        sid = await new_session(client, home)
        await run(client, sid, "hello world")
        info = await client.call("session/close", {"sessionId": sid})
        (path,) = store.glob(f"*/*_{sid}.jsonl")
        loaded = await client.call("session/load", {"path": str(path)})
        _, events = await run(client, sid, "how are you")
        again = await client.call("session/load", {"sessionId": sid})
    finally:
        await client.close()
    assert info == {"ok": True}
    assert not home.sessions.exists() or not list(home.sessions.rglob("*.jsonl"))
    assert loaded["session"]["sessionId"] == sid
    assert loaded["messageCount"] == 6
    assert again["lastSeq"] == events[-1]["seq"]
    assert again["messageCount"] == 8


def stalled_subscriber(home: Home, sid: str) -> socket.socket:
    """A raw socket client that subscribes to ``sid`` and then never reads again."""
    sock = socket.socket(socket.AF_UNIX)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(str(home.socket))
    for n, (method, params) in enumerate(
        [("initialize", {}), ("session/subscribe", {"sessionId": sid})], 1
    ):
        sock.sendall(
            json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}).encode()
            + b"\n"
        )
    received = b""
    while b'"id":2' not in received:
        received += sock.recv(65536)
    return sock


async def test_a_subscriber_that_stops_reading_never_delays_the_run(home: Home) -> None:
    """A watcher stops reading while a run streams 6,000 events (over a megabyte, more than
    the socket buffers hold): the run takes about as long as without it, and the other client
    gets every event in order."""
    add_flood_scenario(home)
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as owner:
            sid = await new_session(owner, home)
            started = time.monotonic()
            await run(owner, sid, "flood")
            alone = time.monotonic() - started
            stalled = stalled_subscriber(home, sid)
            try:
                started = time.monotonic()
                result, events = await run(owner, sid, "flood")
                watched = time.monotonic() - started
                status = await owner.call("daemon/status")
            finally:
                stalled.close()
    finally:
        stop(daemon)
    seqs = [e["seq"] for e in events]
    assert len(events) > 6000
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert result["stopReason"] == "end_turn"
    assert status["connections"] == 2
    assert watched < alone * 3 + 1.0


async def test_two_sessions_at_once_never_cross(home: Home) -> None:
    """Concurrent runs in one daemon: each session's events carry only its own id."""
    async with stdio_client(home) as client:
        a = await new_session(client, home)
        b = await new_session(client, home)
        (ra, ea), (rb, eb) = await asyncio.gather(
            run(client, a, "run twenty commands"), run(client, b, "hello world")
        )
        status = await client.call("daemon/status")
    assert ra["stopReason"] == rb["stopReason"] == "end_turn"
    assert {e["sessionId"] for e in ea} == {a}
    assert {e["sessionId"] for e in eb} == {b}
    assert kinds(ea).count("tool_execution_end") == 20
    assert set(status["sessions"]) >= {a, b}


async def test_fork_and_branch_give_the_right_context(home: Home) -> None:
    """fork copies the path to an entry into a new file; branch moves the leaf in place."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "how are you")
        first = (await client.call("session/messages", {"sessionId": sid}))["messages"]
        await run(client, sid, "hello world")
        fork = await client.call("session/fork", {"sessionId": sid, "entryId": first[-1]["id"]})
        forked = (await client.call("session/messages", {"sessionId": fork["sessionId"]}))[
            "messages"
        ]
        await client.call("session/branch", {"sessionId": sid, "entryId": first[-1]["id"]})
        branched = (await client.call("session/messages", {"sessionId": sid}))["messages"]
        await run(client, sid, "how are you")
        after = (await client.call("session/messages", {"sessionId": sid}))["messages"]
    assert [m["id"] for m in forked] == [m["id"] for m in first]
    assert [m["id"] for m in branched] == [m["id"] for m in first]
    assert len(after) == len(first) + 2
    assert session_lines(home, fork["sessionId"])[0]["parentSession"] == sid


async def test_load_with_replay_streams_history_first(home: Home) -> None:
    """session/load {replay} sends the branch's messages as seq-0 message_end events."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "hello world")
    async with stdio_client(home) as client:
        stream = client.raw_events(sid)
        loaded = await client.call("session/load", {"sessionId": sid, "replay": True})
        stream.close()
        history = [e async for e in stream]
    assert loaded["messageCount"] == len(history) == 6
    assert {e["seq"] for e in history} == {0}
    assert history[0]["event"]["message"]["content"][0]["text"] == "hello world"


def corrupt_line(home: Home, sid: str, number: int) -> None:
    """Overwrite line ``number`` (1-based) of the session file with bytes that are not JSON."""
    (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
    lines = path.read_bytes().split(b"\n")
    lines[number - 1] = b'{"type":"message","id":oops'
    path.write_bytes(b"\n".join(lines))


async def test_corrupt_middle_line_is_reported_to_the_client_on_load(home: Home) -> None:
    """A damaged line is skipped, the rest loads, and every client that starts watching the
    session (load, or an implicit load by prompt) gets a seq-0 session_warning naming it."""
    async with stdio_client(home) as client:
        loaded_sid = await new_session(client, home)
        prompted_sid = await new_session(client, home)
        for sid in (loaded_sid, prompted_sid):
            await run(client, sid, "hello world")
    for sid in (loaded_sid, prompted_sid):
        corrupt_line(home, sid, 5)
    async with stdio_client(home) as client:
        stream = client.raw_events(loaded_sid)
        loaded = await client.call("session/load", {"sessionId": loaded_sid})
        stream.close()
        warned = [e async for e in stream]
        messages = (await client.call("session/messages", {"sessionId": loaded_sid}))["messages"]
        result, events = await run(client, prompted_sid, "how are you")
    assert kinds(warned) == ["session_warning", "session_warning"]
    assert {e["seq"] for e in warned} == {0}
    assert warned[0]["event"]["line"] == 5
    assert "corrupt" in warned[0]["event"]["message"]
    assert "missing parent" in warned[1]["event"]["message"]
    assert loaded["warnings"] == [e["event"]["message"] for e in warned]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool_result", "assistant"]
    assert kinds(events)[:2] == ["session_warning", "session_warning"]
    assert events[0]["event"]["line"] == 5
    assert result["stopReason"] == "end_turn"


async def test_rename_export_close_delete(home: Home) -> None:
    """Title, Markdown/HTML export, unload and delete, with precise errors after delete."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "hello world")
        await client.call("session/rename", {"sessionId": sid, "title": "<b>Greeting</b>"})
        md = await client.call("session/export", {"sessionId": sid, "format": "markdown"})
        html = await client.call("session/export", {"sessionId": sid, "format": "html"})
        await client.call("session/close", {"sessionId": sid})
        assert sid not in (await client.call("daemon/status"))["sessions"]
        await client.call("session/delete", {"sessionId": sid})
        with pytest.raises(RpcError) as gone:
            await client.call("session/load", {"sessionId": sid})
    assert "hello world" in md["content"]
    assert "&lt;b&gt;Greeting&lt;/b&gt;" in html["content"]
    assert "<script" not in html["content"]
    assert gone.value.code == -32003


async def test_delete_refuses_a_running_session_without_force(home: Home) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, prompt = await start_run(client, sid, "be slow", until="agent_start")
        with pytest.raises(RpcError) as busy:
            await client.call("session/delete", {"sessionId": sid})
        await client.call("session/delete", {"sessionId": sid, "force": True})
        result = await prompt
    assert busy.value.code == -32002
    assert result["stopReason"] == "cancelled"
    assert not list(home.sessions.glob(f"*/*_{sid}.jsonl"))


async def test_keys_in_tool_output_are_redacted_on_disk(home: Home) -> None:
    """A key printed by a tool never reaches the session file."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "print the key")
    text = next(home.sessions.glob(f"*/*_{sid}.jsonl")).read_text()
    assert "sk-abcdefghijklmnopqrstuvwxyz0123456789" not in text
    assert "REDACTED" in text


async def test_manual_compaction_summarises_and_keeps_recent_context(home: Home) -> None:
    """session/compact writes a compaction entry and the context starts with its summary."""
    home.project_config(tables="[compaction]\nkeep_tokens = 200\n")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        for _ in range(3):
            await run(client, sid, "hello world")
        before = (await client.call("session/messages", {"sessionId": sid}))["messages"]
        stream = client.raw_events(sid)
        result = await client.call("session/compact", {"sessionId": sid})
        events = await drain(stream, until="compaction_end")
        after = (await client.call("session/messages", {"sessionId": sid}))["messages"]
        again, _ = await run(client, sid, "how are you")
    assert kinds(events) == ["compaction_start", "compaction_end"]
    assert result["compacted"] is True
    assert result["tokensAfter"] < result["tokensBefore"]
    assert after[0]["role"] == "user"
    assert "Summary of the earlier conversation" in after[0]["content"][0]["text"]
    assert len(after) < len(before)
    assert after[1]["id"] == events[-1]["event"]["firstKeptEntryId"]
    assert any(line["type"] == "compaction" for line in session_lines(home, sid))
    assert again["stopReason"] == "end_turn"


async def test_compaction_runs_automatically_near_the_context_window(home: Home) -> None:
    """Past the window minus the reserve, the loop compacts before calling the model."""
    home.project_config(
        tables="[compaction]\nkeep_tokens = 200\ncontext_window = 4600\nreserve_tokens = 100\n"
    )
    # a fixed size (bash brings its process tools)
    tools = ["read", "write", "edit", "undo_edit", "bash", "grep", "find", "ls"]
    async with stdio_client(home) as client:
        sid = await new_session(client, home, tools=tools)
        reasons = []
        for _ in range(3):
            _, events = await run(client, sid, "hello world")
            reasons += [
                e["event"]["reason"] for e in events if e["event"]["type"] == "compaction_end"
            ]
    assert "threshold" in reasons


async def test_context_overflow_compacts_once_and_retries_the_turn(home: Home) -> None:
    """A context-length error from the provider triggers one compaction and a retry."""
    home.project_config(tables="[compaction]\nkeep_tokens = 50\n")
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        await run(client, sid, "hello world")
        result, events = await run(client, sid, "overflow the context")
    starts = [e["event"]["reason"] for e in events if e["event"]["type"] == "compaction_start"]
    assert starts == ["overflow"]
    assert result["stopReason"] == "end_turn"


async def test_a_reloaded_session_keeps_its_permission_mode_and_limits(home: Home) -> None:
    """Settings given at session/new survive a daemon restart: a read-only session stays
    read-only and its turn limit holds, whatever the configuration says."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home, permissionMode="read-only", maxTurns=2)
    async with stdio_client(home) as client:
        state = await client.call("session/state", {"sessionId": sid})
        _, events = await run(client, sid, "write a note")
        looped, _ = await run(client, sid, "loop forever")
    assert state["permissionMode"] == "read-only"
    end = next(e["event"] for e in events if e["event"]["type"] == "tool_execution_end")
    assert end["isError"]
    assert not (home.project / "note.txt").exists()
    assert looped["stopReason"] == "max_turns"
    assert looped["turns"] == 2
    settings = [line for line in session_lines(home, sid) if line["type"] == "settings"]
    assert settings[0]["permissionMode"] == "read-only"
