"""``agentd serve --socket`` as a real process: many clients, files, locking, signals, bridge."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from agentd.errors import RpcError
from agentd.protocol.methods import DaemonStatusResult, InitializeParams
from agentd.rpc import Connection, Router, connect_unix
from tests.harness import (
    IsolatedHome,
    connectable,
    scaled,
    stop,
    wait_ready,
    wait_until,
    wait_until_async,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[IsolatedHome, subprocess.Popen[bytes]]]:
    """One socket daemon for the tests that only need a running daemon."""
    box = IsolatedHome()
    process = box.start_socket_daemon()
    try:
        yield box, process
    finally:
        stop(process)
        box.cleanup()


async def _client_session(box: IsolatedHome, framing: str, calls: int) -> list[int]:
    conn = await connect_unix(box.socket, framing=framing)
    try:
        await conn.request("initialize", InitializeParams())
        seen = []
        for _ in range(calls):
            status = await conn.request("daemon/status", result_type=DaemonStatusResult)
            seen.append(status.connections)
        return seen
    finally:
        await conn.close()


async def test_many_clients_at_once_in_both_framings(
    shared: tuple[IsolatedHome, subprocess.Popen[bytes]],
) -> None:
    """Eight concurrent clients, half of each framing, all get every answer."""
    box, process = shared
    framings = ["ndjson", "content-length"] * 4
    results = await asyncio.gather(*(_client_session(box, f, 30) for f in framings))
    assert all(len(seen) == 30 for seen in results)
    assert max(max(seen) for seen in results) > 1
    assert process.poll() is None


async def test_a_client_vanishing_does_not_disturb_others(
    shared: tuple[IsolatedHome, subprocess.Popen[bytes]],
) -> None:
    """A client that drops mid-request leaves the daemon serving the next one."""
    box, _process = shared
    with socket.socket(socket.AF_UNIX) as rude:
        rude.connect(str(box.socket))
        rude.sendall(b'{"jsonrpc":"2.0","id":1,"method":"daemon/status"}\n{"jsonrpc":')
    assert await _client_session(box, "ndjson", 1)


NOBODY = 65534
PEER = """
import os, socket, sys
path, uid = sys.argv[1], int(sys.argv[2])
if uid != os.getuid():
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
sock = socket.socket(socket.AF_UNIX)
sock.settimeout(10)
sock.connect(path)
reply = b""
try:
    sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"daemon/status"}\\n')
    while chunk := sock.recv(65536):
        reply += chunk
        if reply.endswith(b"\\n"):
            break
except (BrokenPipeError, ConnectionResetError):
    pass
sys.stdout.buffer.write(reply)
"""


@pytest.mark.skipif(os.getuid() != 0, reason="switching to another uid needs root")
@pytest.mark.parametrize("uid", [0, NOBODY], ids=["same-uid", "other-uid"])
def test_a_real_peer_of_another_uid_is_cut_off(sandbox: IsolatedHome, uid: int) -> None:
    """A child that drops to ``nobody`` before connecting gets no answer: SO_PEERCRED decides.

    The sandbox directories and the socket are opened to everyone first, so the file system
    lets the child in and only the daemon's peer check stands in its way.
    """
    process = sandbox.start_socket_daemon()
    try:
        for directory in (sandbox.root, sandbox.socket.parent.parent, sandbox.socket.parent):
            directory.chmod(0o711)
        sandbox.socket.chmod(0o777)
        peer = subprocess.run(
            [sys.executable, "-c", PEER, str(sandbox.socket), str(uid)],
            capture_output=True,
            timeout=scaled(30),
            check=False,
        )
        assert peer.returncode == 0, peer.stderr.decode()

        def rejected_peers() -> list[dict[str, object]]:
            events = sandbox.log_events()
            return [e for e in events if e["event"] == "peer rejected: other user"]

        rejected = rejected_peers()
        if uid == NOBODY:
            assert peer.stdout == b""
            # the log is written by a thread: the line may land a moment after the close
            rejected = wait_until(rejected_peers, what="the rejection logged")
            assert [e["peer_uid"] for e in rejected] == [NOBODY]
        else:
            assert json.loads(peer.stdout)["result"]["pid"] == process.pid
            assert rejected == []
        assert process.poll() is None
    finally:
        assert stop(process) == 0


def test_files_are_private_and_the_pid_file_names_the_daemon(
    shared: tuple[IsolatedHome, subprocess.Popen[bytes]],
) -> None:
    """Socket directory 0700, socket closed to group and others, lock and pid files beside it."""
    box, process = shared
    directory = box.socket.parent
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(box.socket.stat().st_mode) & 0o077 == 0
    assert (directory / "agentd.pid").read_text().strip() == str(process.pid)
    assert (directory / "agentd.lock").exists()


def test_second_daemon_on_the_same_socket_is_refused(
    shared: tuple[IsolatedHome, subprocess.Popen[bytes]],
) -> None:
    """The lock makes a second daemon exit 1 with a message naming the first one's pid."""
    box, process = shared
    result = box.run_agentd("serve", "--socket", str(box.socket), "--log-file", str(box.log))
    assert result.returncode == 1
    assert b"already serving" in result.stderr
    assert str(process.pid).encode() in result.stderr
    assert process.poll() is None


def test_default_socket_path_and_logs_follow_xdg(sandbox: IsolatedHome) -> None:
    """``agentd serve`` alone uses $XDG_RUNTIME_DIR/agentd and logs under $XDG_STATE_HOME."""
    with subprocess.Popen(
        sandbox.agentd("serve"), env=sandbox.env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as process:
        try:
            wait_ready(process, lambda: connectable(sandbox.socket))
        finally:
            assert stop(process) == 0
        assert process.stderr is not None
        assert process.stderr.read() == b""
    log_file = sandbox.root / "sta" / "agentd" / "agentd.log"
    events = [json.loads(line)["event"] for line in log_file.read_text().splitlines()]
    assert "listening" in events
    assert "daemon stopped" in events


def test_stale_socket_is_replaced(sandbox: IsolatedHome) -> None:
    """A socket file nobody listens on (a crashed daemon's) is removed at start."""
    sandbox.socket.parent.mkdir(mode=0o700, parents=True)
    with socket.socket(socket.AF_UNIX) as dead:
        dead.bind(str(sandbox.socket))
    assert sandbox.socket.exists()
    process = sandbox.start_socket_daemon()
    assert stop(process) == 0
    assert any(event["event"] == "removed stale socket" for event in sandbox.log_events())


def test_a_non_socket_file_in_the_way_is_refused(sandbox: IsolatedHome) -> None:
    """A regular file at the socket path is never deleted."""
    sandbox.socket.parent.mkdir(mode=0o700, parents=True)
    sandbox.socket.write_text("keep me")
    result = sandbox.run_agentd(
        "serve", "--socket", str(sandbox.socket), "--log-file", str(sandbox.log)
    )
    assert result.returncode == 1
    assert b"is not a socket" in result.stderr
    assert sandbox.socket.read_text() == "keep me"


def test_unusable_socket_directory_is_a_one_line_error(sandbox: IsolatedHome) -> None:
    """A socket path under a regular file: exit 1, one line on stderr, no traceback."""
    blocker = sandbox.root / "file"
    blocker.write_text("")
    socket_path = str(blocker / "a.sock")
    result = sandbox.run_agentd("serve", "--socket", socket_path, "--log-file", str(sandbox.log))
    assert result.returncode == 1
    assert len(result.stderr.decode().strip().splitlines()) == 1
    assert b"Traceback" not in result.stderr


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "shutdown"])
def test_graceful_stop_removes_socket_and_pid_file(sandbox: IsolatedHome, how: str) -> None:
    """A signal or the shutdown method: exit 0, answered first, socket and pid file gone."""
    process = sandbox.start_socket_daemon()
    if how == "shutdown":
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(str(sandbox.socket))
            client.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n')
            client.sendall(b'{"jsonrpc":"2.0","id":2,"method":"shutdown"}\n')
            replies = client.makefile("rb").read().splitlines()
        assert json.loads(replies[-1]) == {"jsonrpc": "2.0", "id": 2, "result": {"ok": True}}
        assert process.wait(scaled(15)) == 0
    else:
        process.send_signal(getattr(signal, how))
        assert process.wait(scaled(15)) == 0
    assert not sandbox.socket.exists()
    assert not sandbox.socket.with_suffix(".pid").exists()
    events = [event["event"] for event in sandbox.log_events()]
    assert "daemon stopped" in events
    # after it, at most the info lines of start-up work the stop cancelled (a loaded machine)
    after = events[len(events) - events[::-1].index("daemon stopped") :]
    assert set(after) <= {"callback cancelled"}, after


def test_bad_command_lines_are_one_line_usage_errors(sandbox: IsolatedHome) -> None:
    """Usage errors exit 2 with a single line; --version is instant and prints the version."""
    for args in (["serve", "--tcp", "nonsense"], ["serve", "--stdio", "--socket"], ["bogus"], []):
        result = sandbox.run_agentd(*args)
        assert result.returncode == 2, args
        assert len(result.stderr.decode().strip().splitlines()) == 1, result.stderr
    version = sandbox.run_agentd("--version")
    assert version.returncode == 0
    assert version.stdout.decode().startswith("agentd ")


def _bridge(sandbox: IsolatedHome, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentctl", "bridge", *args],
        env=sandbox.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_bridge_relays_both_framings_to_a_running_daemon(
    shared: tuple[IsolatedHome, subprocess.Popen[bytes]],
) -> None:
    """Bytes pass unchanged both ways; stdin EOF ends the bridge with 0."""
    box, process = shared
    request = b'{"jsonrpc":"2.0","id":"b","method":"daemon/status"}'
    bridge = _bridge(box, "--socket", str(box.socket))
    out, err = bridge.communicate(b"Content-Length: %d\r\n\r\n%b" % (len(request), request), 30)
    assert bridge.returncode == 0, err
    header, _, body = out.partition(b"\r\n\r\n")
    assert header == b"Content-Length: %d" % len(body)
    assert json.loads(body)["result"]["pid"] == process.pid
    bridge = _bridge(box, "--socket", str(box.socket))
    out, err = bridge.communicate(request + b"\n", 30)
    assert bridge.returncode == 0, err
    assert json.loads(out)["id"] == "b"


def test_bridge_starts_the_daemon_when_none_runs(sandbox: IsolatedHome) -> None:
    """With nobody listening, the bridge starts a detached daemon that outlives it."""
    bridge = _bridge(sandbox)
    out, err = bridge.communicate(b'{"jsonrpc":"2.0","id":1,"method":"daemon/status"}\n', 60)
    assert bridge.returncode == 0, err
    pid = json.loads(out)["result"]["pid"]
    assert pid != bridge.pid
    assert int(sandbox.socket.with_suffix(".pid").read_text()) == pid
    os.kill(pid, signal.SIGTERM)
    wait_until(lambda: not sandbox.socket.exists(), 15, "the socket to be removed")


def test_bridge_fails_clearly_when_the_daemon_cannot_start(sandbox: IsolatedHome) -> None:
    """A socket path the daemon cannot use: exit 1 and a message naming the log."""
    blocker = sandbox.root / "file"
    blocker.write_text("")
    bridge = _bridge(sandbox, "--socket", str(blocker / "agentd.sock"))
    _out, err = bridge.communicate(b"", 60)
    assert bridge.returncode == 1
    assert b"cannot reach agentd" in err


FLOOD = {
    "scenarios": [
        {
            "name": "flood",
            "trigger": "flood",
            "steps": [{"chunk_size": 2, "response": {"content": "ab", "content_repeat": 30_000}}],
        }
    ]
}


async def test_a_client_that_stops_reading_is_dropped_and_the_run_goes_on(
    sandbox: IsolatedHome,
) -> None:
    """30,000 events to a client that never reads: after --stall-timeout it is dropped (and
    logged), while a subscribed client gets every event without a gap and the session ends
    idle."""
    scenarios = sandbox.root / "flood.json"
    scenarios.write_text(json.dumps(FLOOD))
    sandbox.env["AGENTD_MOCK_SCENARIOS"] = str(scenarios)
    work = sandbox.root / "work"
    work.mkdir()
    process = sandbox.start_socket_daemon("--stall-timeout", "0.5")
    try:
        with socket.socket(socket.AF_UNIX) as stalled:
            stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            stalled.connect(str(sandbox.socket))
            new = {"cwd": str(work), "provider": "mock", "sessionId": "s1"}
            for request in (
                {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
                {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new},
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "session/prompt",
                    "params": {"sessionId": "s1", "text": "flood"},
                },
            ):
                stalled.sendall(json.dumps(request).encode() + b"\n")
            events = await _watch_until_agent_end(sandbox, "s1")
            dropped = await _log_event(sandbox, "dropping connection")
        seqs = [note["seq"] for note in events]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # no gap for the reader
        assert seqs[-1] > 30_000
        assert events[-1]["event"]["type"] == "agent_end"
        assert "stopped reading" in dropped["reason"]
        assert process.poll() is None
    finally:
        assert stop(process) == 0


async def _log_event(sandbox: IsolatedHome, name: str, timeout: float = 15) -> dict[str, Any]:
    """The first daemon log line whose event is ``name``, waiting for it to appear."""

    def first() -> dict[str, Any] | None:
        complete = sandbox.log.read_text().split("\n")[:-1]  # a line may be half written
        return next((e for e in map(json.loads, complete) if e["event"] == name), None)

    return await wait_until_async(first, timeout, f"{name!r} in the log", 0.05)


async def _watch_until_agent_end(sandbox: IsolatedHome, session_id: str) -> list[dict[str, Any]]:
    """Subscribe (replaying what is buffered) and collect ``session/event`` params until
    ``agent_end``."""
    events: list[dict[str, Any]] = []
    ended = asyncio.Event()

    def on_event(_conn: Connection, params: Any) -> None:
        events.append(params)
        if params["event"]["type"] == "agent_end":
            ended.set()

    router = Router()
    router.on_notification("session/event", on_event)
    conn = await connect_unix(sandbox.socket, router)
    try:
        await conn.request("initialize", InitializeParams())

        async def subscribed() -> bool:  # refused until the prompter has created the session
            try:
                await conn.request("session/subscribe", {"sessionId": session_id, "sinceSeq": 0})
            except RpcError:
                return False
            return True

        await wait_until_async(subscribed, 60, "a subscription to the session", 0.02)
        async with asyncio.timeout(scaled(60)):
            await ended.wait()
            state = await conn.request("session/state", {"sessionId": session_id})
        assert state["status"] == "idle"
        return events
    finally:
        await conn.close()
