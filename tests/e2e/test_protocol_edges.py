"""Protocol edges on raw frames to a real ``agentd serve --stdio``: empty-array params,
``$/cancelRequest`` on a prompt (its answer after ``agent_end``; a ``turn_end`` for the
cancelled turn)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness import Home, scaled, stop

pytestmark = pytest.mark.e2e


class RawDaemon:
    def __init__(self, home: Home) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentd", "serve", "--stdio"],
            env=home.env,
            cwd=home.project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.process.stdin.flush()

    def frames(self) -> Iterator[dict[str, Any]]:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            yield json.loads(line)

    def answer(self, request_id: int) -> dict[str, Any]:
        return next(f for f in self.frames() if f.get("id") == request_id)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=scaled(15))
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def daemon(home: Home) -> Iterator[RawDaemon]:
    raw = RawDaemon(home)
    try:
        yield raw
    finally:
        raw.close()


def test_an_empty_array_is_empty_params(daemon: RawDaemon, home: Home) -> None:
    daemon.send({"id": 1, "method": "initialize", "params": []})
    assert "result" in daemon.answer(1)
    daemon.send({"id": 2, "method": "daemon/status", "params": []})
    assert daemon.answer(2)["result"]["transport"] == "stdio"
    daemon.send({"id": 3, "method": "session/list", "params": []})
    assert "sessions" in daemon.answer(3)["result"]
    daemon.send({"id": 4, "method": "session/new", "params": []})
    assert daemon.answer(4)["error"]["code"] == -32602  # cwd is required
    daemon.send({"id": 5, "method": "daemon/status", "params": [1]})
    assert daemon.answer(5)["error"]["code"] == -32602


def test_cancel_request_on_a_prompt_answers_after_agent_end(daemon: RawDaemon, home: Home) -> None:
    daemon.send({"id": 1, "method": "initialize"})
    daemon.answer(1)
    new = {"cwd": str(home.project), "provider": "mock"}
    daemon.send({"id": 2, "method": "session/new", "params": new})
    sid = daemon.answer(2)["result"]["sessionId"]
    daemon.send(
        {"id": 3, "method": "session/prompt", "params": {"sessionId": sid, "text": "be slow"}}
    )
    seen: list[str] = []
    for frame in daemon.frames():
        if frame.get("method") == "session/event":
            seen.append(frame["params"]["event"]["type"])
            if seen[-1] == "message_update":
                daemon.send({"method": "$/cancelRequest", "params": {"id": 3}})
        elif frame.get("id") == 3:
            assert frame["error"]["code"] == -32800
            break
    assert seen[-3:] == ["message_end", "turn_end", "agent_end"]
    assert seen.count("turn_start") == seen.count("turn_end") == 1


def test_half_close_still_gets_every_answer(home: Home) -> None:
    """A socket client that shuts down its sending side gets the answers of what it sent,
    then end of stream."""
    process = home.start_socket_daemon()
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(home.socket))
            for n, method in enumerate(["initialize", "daemon/status", "session/list"], 1):
                sock.sendall(
                    json.dumps({"jsonrpc": "2.0", "id": n, "method": method}).encode() + b"\n"
                )
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(scaled(10))
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        answers = [json.loads(line) for line in data.splitlines()]
        assert sorted(a["id"] for a in answers) == [1, 2, 3]
        assert all("result" in a for a in answers)
    finally:
        stop(process)
