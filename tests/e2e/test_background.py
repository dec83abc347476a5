"""Background processes through a real daemon and the mock LLM: a loopback server that
answers while the run goes on and after it, kept across a client's disconnect, listed by
session/state and session/processes, replayed by session/load, in the export, ended by
session/close; the exit told to the model at its next turn, once; nothing left after the
daemon is SIGKILLed and started again."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_orphans import running
from tests.e2e.test_tools import add_scenarios
from tests.harness import (
    Home,
    drain,
    new_session,
    run,
    socket_client,
    start_run,
    stdio_client,
    stop,
    wait_until_async,
)
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_script(port: int) -> str:
    return (
        "import socket\n"
        "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        f"s.bind(('127.0.0.1', {port})); s.listen(); print('listening', flush=True)\n"
        "while True:\n"
        "    c, _ = s.accept(); c.sendall(b'pong\\n'); c.close()\n"
    )


def answer(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        return conn.makefile("rb").readline()


def server_scenario(port: int) -> dict[str, Any]:
    """Start the server in the background, wait for it, ask it from a foreground bash, then
    a slow last reply (the run is still going while the test asks it too)."""
    start = {"command": f"{sys.executable} -u server.py", "background": True}
    probe = f"{sys.executable} -c \"import socket; print(socket.create_connection(('127.0.0.1', {port})).recv(9))\""  # noqa: E501
    wait = {"id": "p1", "wait_ms": 20000, "filter": "listening"}
    return {
        "name": "serve",
        "trigger": "serve in the background",
        "steps": [
            {"response": {"tool_calls": [tool_call("bash", start, "c1")]}},
            {"response": {"tool_calls": [tool_call("process_output", wait, "c2")]}},
            {"response": {"tool_calls": [tool_call("bash", {"command": probe}, "c3")]}},
            {"delay_ms": 1500, "response": {"content": "The server runs."}},
        ],
    }


def short_scenario() -> dict[str, Any]:
    command = "sleep 0.5; echo finished-here; exit 3"
    return {
        "name": "short",
        "trigger": "start a short job",
        "steps": [
            {
                "response": {
                    "tool_calls": [tool_call("bash", {"command": command, "background": True})]
                }
            },
            {"response": {"content": "Started."}},
        ],
    }


async def test_a_background_server_outlives_its_run_and_client(home: Home) -> None:
    port = free_port()
    (home.project / "server.py").write_text(server_script(port))
    add_scenarios(home, server_scenario(port))
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            stream, prompt = await start_run(
                client, sid, "serve in the background", until="process_start"
            )
            await drain(stream, until="tool_execution_end")  # c1: started
            waited = await drain(stream, until="tool_execution_end")  # c2: it listens
            assert "listening" in json.dumps(waited[-1]["event"]["result"])
            assert answer(port) == b"pong\n"  # while the run goes on
            rest = await drain(stream, until="agent_end")
            stream.close()
            await prompt
            probe_end = [e["event"] for e in rest if e["event"]["type"] == "tool_execution_end"]
            assert "pong" in json.dumps(probe_end[-1]["result"])
            state = await client.call("session/state", {"sessionId": sid})
            assert [(p["id"], p["state"]) for p in state["processes"]] == [("p1", "running")]
            pid = state["processes"][0]["pid"]
        # the client went away: the process stays
        async with socket_client(home) as again:
            assert answer(port) == b"pong\n"
            listed = await again.call("session/processes", {})
            assert [s["sessionId"] for s in listed["sessions"]] == [sid]
            buffered = again.raw_events(sid)
            await again.call("session/subscribe", {"sessionId": sid, "sinceSeq": 0})
            since = await drain(buffered, until="process_start")
            buffered.close()
            assert since[-1]["seq"] > 0  # the replay buffer holds it
            await again.call("session/unsubscribe", {"sessionId": sid})
            replayed = again.raw_events(sid)
            await again.call("session/load", {"sessionId": sid, "replay": True})
            seen = await drain(replayed, until="process_start")
            replayed.close()
            assert seen[-1]["seq"] == 0
            assert seen[-1]["event"]["process"]["id"] == "p1"
            export = await again.call("session/export", {"sessionId": sid, "format": "markdown"})
            assert "## Background processes" in export["content"]
            assert "p1: " in export["content"]
            assert "server.py" in export["content"]
            await again.call("session/close", {"sessionId": sid})
            await wait_until_async(lambda: not _alive(pid), 10, "the server to end")
        with pytest.raises(ConnectionRefusedError):
            answer(port)
    finally:
        stop(daemon)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_the_exit_is_told_at_the_next_turn_once(home: Home) -> None:
    add_scenarios(home, short_scenario())
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            stream = client.raw_events(sid)
            await run(client, sid, "start a short job")
            ended = await drain(stream, until="process_exit")
            stream.close()
            process = ended[-1]["event"]["process"]
            assert (process["state"], process["exitCode"]) == ("exited", 3)
            assert "finished-here" in process["tail"]
            await run(client, sid, "how are you")
            await run(client, sid, "how are you")
            page = await client.call("session/messages", {"sessionId": sid})
            users = [json.dumps(m["content"]) for m in page["messages"] if m["role"] == "user"]
            notes = [text for text in users if "Background process p1" in text]
            assert len(notes) == 1
            assert "exited 3" in notes[0]
            assert "finished-here" in notes[0]
            # it came right before the second prompt
            assert users.index(notes[0]) == 1
    finally:
        stop(daemon)


async def test_a_killed_daemon_leaves_no_background_process(home: Home) -> None:
    needle = "sleep 23571"
    command = "sleep 23571 & sleep 23571; echo never"
    scenario = {
        "name": "sleepers",
        "trigger": "sleep in the background",
        "steps": [
            {
                "response": {
                    "tool_calls": [tool_call("bash", {"command": command, "background": True})]
                }
            },
            {"response": {"content": "Sleeping."}},
        ],
    }
    add_scenarios(home, scenario)
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            sid = await new_session(client, home)
            await run(client, sid, "sleep in the background")
            await wait_until_async(lambda: len(running(needle)) >= 2, 10)
            daemon.send_signal(signal.SIGKILL)
            daemon.wait()
        daemon = home.start_socket_daemon()
        await wait_until_async(lambda: not running(needle), 10, "the start-up sweep")
    finally:
        stop(daemon)
        for pid in running(needle):
            os.kill(pid, signal.SIGKILL)


async def test_a_background_process_files_are_tracked_for_rewind(home: Home) -> None:
    """What a background process creates is recorded when it ends (a ``file_changes``
    entry), so rewinding the prompt that started it removes the file."""
    command = "sleep 0.3; echo made > bg-made.txt"
    scenario = {
        "name": "maker",
        "trigger": "make a file in the background",
        "steps": [
            {
                "response": {
                    "tool_calls": [tool_call("bash", {"command": command, "background": True})]
                }
            },
            {"response": {"content": "Making it."}},
        ],
    }
    add_scenarios(home, scenario)
    made = home.project / "bg-made.txt"
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        stream = client.raw_events(sid)
        await run(client, sid, "make a file in the background")
        await drain(stream, until="process_exit")
        stream.close()
        assert made.read_text() == "made\n"
        (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
        entries = [json.loads(line) for line in path.read_text().splitlines()[1:]]
        changed = {c["path"] for e in entries if e["type"] == "file_changes" for c in e["changes"]}
        assert str(made) in changed
        result = await client.call("session/rewind", {"sessionId": sid, "turns": 1})
    assert str(made) in result["removed"]
    assert not made.exists()
