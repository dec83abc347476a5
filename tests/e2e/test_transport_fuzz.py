"""Malformed input against one real socket daemon: it answers errors and keeps serving."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness import IsolatedHome, scaled, stop

pytestmark = pytest.mark.e2e

STATUS = b'{"jsonrpc":"2.0","id":"probe","method":"daemon/status"}'
FUZZ = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


class SyncClient:
    """A blocking JSON-RPC client on a Unix socket, in either framing, for raw bytes."""

    def __init__(self, path: Path, timeout: float = 10) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(scaled(timeout))
        self.sock.connect(str(path))
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed")
        self.buffer += chunk

    def read_line(self) -> bytes:
        while b"\n" not in self.buffer:
            self._fill()
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def read_content_length(self) -> bytes:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        header, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        length = int(header.split(b":", 1)[1])
        while len(self.buffer) < length:
            self._fill()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return body

    def response_to(self, request_id: Any, *, content_length: bool = False) -> dict[str, Any]:
        """Skip error replies to earlier garbage until the answer to ``request_id``."""
        while True:
            raw = self.read_content_length() if content_length else self.read_line()
            message: dict[str, Any] = json.loads(raw)
            if message.get("id") == request_id:
                return message

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def daemon() -> Iterator[tuple[IsolatedHome, subprocess.Popen[bytes]]]:
    box = IsolatedHome()
    process = box.start_socket_daemon("--log-level", "debug")
    try:
        yield box, process
    finally:
        stop(process)
        box.cleanup()


def _still_serving(box: IsolatedHome, process: subprocess.Popen[bytes]) -> None:
    """A fresh connection is answered and the daemon process is alive."""
    client = SyncClient(box.socket)
    try:
        client.send(STATUS + b"\n")
        assert "result" in client.response_to("probe")
    finally:
        client.close()
    assert process.poll() is None


@given(garbage=st.binary(max_size=4096))
@FUZZ
def test_garbage_on_a_fresh_connection(
    daemon: tuple[IsolatedHome, subprocess.Popen[bytes]], garbage: bytes
) -> None:
    """Any bytes as a connection's opening leave the daemon serving others."""
    box, process = daemon
    client = SyncClient(box.socket)
    client.send(garbage)
    client.close()
    _still_serving(box, process)


@given(lines=st.lists(st.binary(max_size=512).map(lambda b: b.replace(b"\n", b"")), max_size=5))
@FUZZ
def test_ndjson_resynchronises_after_garbage_lines(
    daemon: tuple[IsolatedHome, subprocess.Popen[bytes]], lines: list[bytes]
) -> None:
    """After garbage lines, the next valid line on the same connection is answered."""
    box, _process = daemon
    client = SyncClient(box.socket)
    try:
        client.send(STATUS + b"\n")
        assert "result" in client.response_to("probe")
        client.send(b"\n".join(lines) + b"\n" + STATUS + b"\n")
        assert "result" in client.response_to("probe")
    finally:
        client.close()


@given(bodies=st.lists(st.binary(max_size=512), max_size=5))
@FUZZ
def test_content_length_resynchronises_after_garbage_bodies(
    daemon: tuple[IsolatedHome, subprocess.Popen[bytes]], bodies: list[bytes]
) -> None:
    """Well-framed garbage bodies get errors; the next real request is answered."""
    box, _process = daemon
    client = SyncClient(box.socket)
    try:
        frames = [*bodies, STATUS]
        client.send(b"".join(b"Content-Length: %d\r\n\r\n%b" % (len(f), f) for f in frames))
        assert "result" in client.response_to("probe", content_length=True)
    finally:
        client.close()


HEADER_NAMES = st.sampled_from([b"Content-Length", b"content-length", b"CONTENT-LENGTH", b"X-A"])
HEADER_VALUES = st.one_of(
    st.integers(min_value=-5, max_value=10**30).map(lambda n: b"%d" % n),
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
)
HEADER_LINES = st.tuples(
    st.one_of(HEADER_NAMES, st.binary(max_size=20).map(lambda b: b.replace(b"\n", b""))),
    st.sampled_from([b":", b": ", b" : ", b""]),
    HEADER_VALUES,
    st.sampled_from([b"\r\n", b"\n", b""]),
).map(b"".join)


@given(
    headers=st.lists(HEADER_LINES, max_size=4),
    blank=st.sampled_from([b"\r\n", b"\n", b""]),
    body=st.binary(max_size=256),
)
@FUZZ
def test_fuzzed_content_length_headers(
    daemon: tuple[IsolatedHome, subprocess.Popen[bytes]],
    headers: list[bytes],
    blank: bytes,
    body: bytes,
) -> None:
    """Truncated, huge, negative or garbled headers in any case: other clients stay served."""
    box, process = daemon
    client = SyncClient(box.socket)
    client.send(b"Content-Length: 2\r\n\r\n{}" + b"".join(headers) + blank + body)
    client.close()
    _still_serving(box, process)


@given(
    depth=st.integers(min_value=1, max_value=60_000),
    opener=st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]),
    closed=st.booleans(),
)
@FUZZ
def test_deep_nesting_on_a_live_connection(
    daemon: tuple[IsolatedHome, subprocess.Popen[bytes]],
    depth: int,
    opener: tuple[bytes, bytes],
    closed: bool,
) -> None:
    """Nested params of any depth, closed or not, earn an error; the next line is answered."""
    box, _process = daemon
    start, end = opener
    nested = start * depth + (b"1" + end * depth if closed else b"")
    client = SyncClient(box.socket)
    try:
        client.send(b'{"jsonrpc":"2.0","id":1,"method":"daemon/status","params":' + nested + b"}\n")
        client.send(STATUS + b"\n")
        assert "result" in client.response_to("probe")
    finally:
        client.close()


DEEP = b'{"jsonrpc":"2.0","id":1,"method":"daemon/status","params":' + b"[" * 100_000


@pytest.mark.parametrize(
    "opening",
    [
        b"Content-Length: 99999999999999999999\r\n\r\n{}",
        b"Content-Length: 10\r\n",
        b"Content-Length",
        b"Content-Length: 5\r\n" + b"X: " + b"y" * 100_000,
        b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}\n',
        DEEP + b"]" * 100_000 + b"}\n",
        DEEP,
        b"\x00" * 70_000,
        b"[" * 200_000 + b"\n",
    ],
    ids=[
        "huge-length",
        "truncated-headers",
        "half-header",
        "endless-headers",
        "invalid-utf8",
        "deep-nesting",
        "deep-unterminated",
        "nul-bytes",
        "deep-array-line",
    ],
)
def test_hostile_openings(
    daemon: tuple[IsolatedHome, subprocess.Popen[bytes]], opening: bytes
) -> None:
    """Classic malformed input: the daemon survives and the next client is served."""
    box, process = daemon
    client = SyncClient(box.socket)
    try:
        client.send(opening)
    finally:
        client.close()
    _still_serving(box, process)


def test_invalid_utf8_and_deep_nesting_get_parse_errors_and_the_connection_lives(
    daemon: tuple[IsolatedHome, subprocess.Popen[bytes]],
) -> None:
    """-32700 with ``id: null`` for each, then the same connection is still answered."""
    box, _process = daemon
    client = SyncClient(box.socket)
    try:
        client.send(b'{"jsonrpc":"2.0","id":1,"method":"\xff"}\n' + DEEP + b"]" * 100_000 + b"}\n")
        first, second = json.loads(client.read_line()), json.loads(client.read_line())
        assert first["error"]["code"] == second["error"]["code"] == -32700
        assert first["id"] is second["id"] is None
        client.send(STATUS + b"\n")
        assert "result" in client.response_to("probe")
    finally:
        client.close()


def test_no_internal_errors_were_logged(
    daemon: tuple[IsolatedHome, subprocess.Popen[bytes]],
) -> None:
    """After all the abuse, the log holds no handler or connection failure (runs last here)."""
    box, process = daemon
    _still_serving(box, process)
    failures = [
        event
        for event in box.log_events()
        if event["event"] in {"request failed", "connection failed", "notification handler failed"}
    ]
    assert failures == []
