"""``agentd serve --tcp``: loopback only by default, and nothing without the token."""

from __future__ import annotations

import json
import re
import socket
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import IsolatedHome, scaled, stop

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def tcp_daemon() -> Iterator[tuple[IsolatedHome, int, str]]:
    """A TCP daemon on an ephemeral loopback port: (sandbox, port, token)."""
    with IsolatedHome() as box:
        process, port = box.start_tcp_daemon()
        try:
            assert f"; token in {box.tcp_token_file}\n" in box.stderr.read_text()
            yield box, port, box.tcp_token()
        finally:
            stop(process)


def _exchange(port: int, *messages: dict[str, object]) -> tuple[list[dict[str, object]], bool]:
    """Send messages, read every reply until the daemon closes or goes quiet."""
    with socket.create_connection(("127.0.0.1", port), timeout=scaled(5)) as sock:
        for message in messages:
            sock.sendall(json.dumps(message).encode() + b"\n")
        stream = sock.makefile("rb")
        replies, closed = [], False
        try:
            for _ in messages:
                line = stream.readline()
                if not line:
                    closed = True
                    break
                replies.append(json.loads(line))
            if not closed:
                sock.settimeout(0.5)
                closed = stream.readline() == b""
        except TimeoutError:
            closed = False
        except ConnectionResetError:
            closed = True
        stream.close()
    return replies, closed


def _init(token: str | None, request_id: int = 1) -> dict[str, object]:
    params = {} if token is None else {"token": token}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


STATUS = {"jsonrpc": "2.0", "id": 2, "method": "daemon/status"}


@pytest.mark.parametrize("token", [None, "wrong-token-of-good-length-000000"])
def test_missing_or_wrong_token_is_refused_and_closed(
    tcp_daemon: tuple[IsolatedHome, int, str], token: str | None
) -> None:
    """initialize without the right token: -32001 (for what was already sent too), hang-up."""
    _box, port, _token = tcp_daemon
    replies, closed = _exchange(port, _init(token), STATUS)
    assert replies
    assert all(reply["error"]["code"] == -32001 for reply in replies)  # type: ignore[index]
    assert closed


def test_nothing_but_initialize_before_the_token(tcp_daemon: tuple[IsolatedHome, int, str]) -> None:
    """Even daemon/status needs the token on TCP."""
    _box, port, _token = tcp_daemon
    replies, closed = _exchange(port, STATUS)
    assert replies[0]["error"]["code"] == -32001  # type: ignore[index]
    assert closed


def test_the_right_token_opens_the_connection(tcp_daemon: tuple[IsolatedHome, int, str]) -> None:
    """With the token from the file, calls work and the transport is tcp."""
    box, port, token = tcp_daemon
    replies, closed = _exchange(port, _init(token), STATUS)
    assert not closed
    assert "result" in replies[0]
    assert replies[1]["result"]["transport"] == "tcp"  # type: ignore[index]
    token_file = box.root / "tcp.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


def test_content_length_framing_works_over_tcp(tcp_daemon: tuple[IsolatedHome, int, str]) -> None:
    """A Content-Length client on TCP is answered in Content-Length."""
    _box, port, token = tcp_daemon
    bodies = [json.dumps(_init(token)).encode(), json.dumps(STATUS).encode()]
    with socket.create_connection(("127.0.0.1", port), timeout=scaled(5)) as sock:
        sock.sendall(b"".join(b"content-length: %d\r\n\r\n%b" % (len(b), b) for b in bodies))
        stream = sock.makefile("rb")
        replies = []
        for _ in bodies:
            header = stream.readline()
            assert header.startswith(b"Content-Length: ")
            assert stream.readline() == b"\r\n"
            replies.append(json.loads(stream.read(int(header.split(b":")[1]))))
        stream.close()
    assert replies[1]["result"]["transport"] == "tcp"


def test_non_loopback_address_needs_allow_remote() -> None:
    """Listening on all interfaces is refused (exit 1) unless --allow-remote is given."""
    box = IsolatedHome()
    try:
        result = box.run_agentd("serve", "--tcp", "0.0.0.0:0", "--log-file", str(box.log))
        assert result.returncode == 1
        assert b"--allow-remote" in result.stderr
    finally:
        box.cleanup()


def test_port_in_use_is_a_one_line_error(tcp_daemon: tuple[IsolatedHome, int, str]) -> None:
    """A second daemon on a taken port exits 1 with the reason, without a traceback."""
    box, port, _token = tcp_daemon
    address, token, log = f"127.0.0.1:{port}", str(box.root / "tcp.token"), str(box.log)
    result = box.run_agentd("serve", "--tcp", address, "--token-file", token, "--log-file", log)
    assert result.returncode == 1
    assert b"Traceback" not in result.stderr
    assert b"in use" in result.stderr


def test_default_token_and_log_files_follow_xdg() -> None:
    """Without flags the token is $XDG_RUNTIME_DIR/agentd/tcp.token (0600, in a 0700
    directory) and the log $XDG_STATE_HOME/agentd/agentd.log, as the README says."""
    box = IsolatedHome()
    try:
        with subprocess.Popen(
            box.agentd("serve", "--tcp", "127.0.0.1:0"),
            env=box.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        ) as process:
            try:
                assert process.stderr is not None
                line = process.stderr.readline().decode()
                match = re.search(r"listening on 127\.0\.0\.1:(\d+); token in (\S+)", line)
                assert match, line
                token_file = Path(box.env["XDG_RUNTIME_DIR"]) / "agentd" / "tcp.token"
                assert Path(match[2]) == token_file
                assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
                assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
                token = token_file.read_text().strip()
                replies, _closed = _exchange(int(match[1]), _init(token), STATUS)
                assert replies[1]["result"]["transport"] == "tcp"  # type: ignore[index]
            finally:
                assert stop(process) == 0
        log_file = Path(box.env["XDG_STATE_HOME"]) / "agentd" / "agentd.log"
        events = [json.loads(line)["event"] for line in log_file.read_text().splitlines()]
        assert "listening" in events
        assert events[-1] == "daemon stopped"
    finally:
        box.cleanup()


LOCAL_ONLY_CALLS = {
    "session/new": {"cwd": "/tmp"},
    "session/load": {"sessionId": "nope"},
    "session/setModel": {"sessionId": "nope", "model": "m"},
    "models/list": {},
}
"""A call of every method whose table entry has a ``local_only`` field (checked below)."""
REFUSED = "`providerEnv` is accepted over the Unix socket or stdio only"


def test_local_only_fields_are_refused_over_tcp(tcp_daemon: tuple[IsolatedHome, int, str]) -> None:
    """``providerEnv`` (API keys) never travels over TCP: every method that takes it refuses it
    with InvalidParams, before anything happens (the web API gives the same error)."""
    from agentd.protocol.table import METHODS

    assert {m for m, s in METHODS.items() if s.local_only and s.rpc} == set(LOCAL_ONLY_CALLS)
    _box, port, token = tcp_daemon
    env = {"OPENAI_API_KEY": "sk-must-not-travel-1234"}
    calls = [
        {"jsonrpc": "2.0", "id": i, "method": method, "params": params | {"providerEnv": env}}
        for i, (method, params) in enumerate(LOCAL_ONLY_CALLS.items(), start=2)
    ]
    replies, closed = _exchange(port, _init(token), *calls)
    assert not closed
    errors = [reply["error"] for reply in replies[1:]]
    assert [e["code"] for e in errors] == [-32602] * len(calls)  # type: ignore[index]
    assert {e["message"] for e in errors} == {REFUSED}  # type: ignore[index]
