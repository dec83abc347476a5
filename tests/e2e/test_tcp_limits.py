"""TCP before authentication: a deadline, a small frame limit, a cap, and running out of
file descriptors, against a real ``agentd serve --tcp``."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import IsolatedHome, scaled, stop, wait_until

pytestmark = pytest.mark.e2e


@contextlib.contextmanager
def tcp_daemon(*extra: str, fd_limit: int | None = None) -> Iterator[tuple[IsolatedHome, int, int]]:
    """A TCP daemon: (sandbox, port, pid)."""

    def lower_fd_limit() -> None:
        if fd_limit is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

    with IsolatedHome() as box:
        process, port = box.start_tcp_daemon(*extra, preexec_fn=lower_fd_limit)
        try:
            yield box, port, process.pid
        finally:
            stop(process)


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the daemon closes ``sock`` within ``seconds`` (what it sends is skipped)."""
    sock.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return False


def status_works(port: int, box: IsolatedHome) -> bool:
    token = box.tcp_token()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"token": token}}
    status = {"jsonrpc": "2.0", "id": 2, "method": "daemon/status"}
    with socket.create_connection(("127.0.0.1", port), timeout=scaled(5)) as sock:
        sock.sendall(json.dumps(init).encode() + b"\n" + json.dumps(status).encode() + b"\n")
        stream = sock.makefile("rb")
        replies = [json.loads(stream.readline()) for _ in range(2)]
        stream.close()
    return "result" in replies[1]


def open_sockets(pid: int) -> int:
    """How many sockets process ``pid`` holds open."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):  # closed since the listing
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    return count


def logged(box: IsolatedHome, event: str) -> list[dict[str, Any]]:
    """The daemon's log lines of ``event`` so far (a line still being written is skipped)."""
    lines = box.log.read_text().split("\n")[:-1] if box.log.exists() else []
    return [e for e in map(json.loads, lines) if e["event"].startswith(event)]


def peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(x for x in status.splitlines() if x.startswith("VmHWM:")).split()[1])


def test_a_silent_client_is_dropped_after_the_auth_timeout() -> None:
    """With the defaults (10 s): a connection that never sends initialize is closed."""
    with tcp_daemon() as (box, port, _pid):
        with socket.create_connection(("127.0.0.1", port)) as idle:
            assert not closed_within(idle, 8)
            assert closed_within(idle, 6)
        assert status_works(port, box)
        # the log is written by a thread: the line may land a moment after the close
        wait_until(lambda: logged(box, "unauthenticated client timed out"), what="the log line")


def test_a_big_frame_before_authentication_is_refused_without_buffering_it() -> None:
    """Eight connections each sending 16 MiB without a newline: each gets an error and is
    closed after the first 64 KiB; the daemon's memory does not grow by what they sent."""
    with tcp_daemon() as (box, port, pid):
        before = peak_rss_kib(pid)
        chunk = b"x" * (1 << 20)
        for _ in range(8):
            with socket.create_connection(("127.0.0.1", port), timeout=scaled(5)) as sock:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    for _ in range(16):
                        sock.sendall(chunk)
                reply = sock.makefile("rb").readline()
                assert json.loads(reply)["error"]["code"] == -32600
                assert closed_within(sock, 5)
        assert peak_rss_kib(pid) - before < 32 * 1024
        assert status_works(port, box)


def test_unauthenticated_connections_are_capped() -> None:
    """With the defaults (64): the 65th connection waiting to authenticate is refused."""
    with tcp_daemon() as (box, port, pid):
        idle = open_sockets(pid)
        waiting = [socket.create_connection(("127.0.0.1", port)) for _ in range(64)]
        try:
            wait_until(lambda: open_sockets(pid) >= idle + 64, what="64 connections accepted")
            with socket.create_connection(("127.0.0.1", port)) as extra:
                assert closed_within(extra, 5)
            assert not closed_within(waiting[0], 0.2)
        finally:
            for sock in waiting:
                sock.close()
        wait_until(lambda: open_sockets(pid) <= idle, what="the 64 connections closed")
        assert status_works(port, box)
        refusals = wait_until(lambda: logged(box, "too many"), what="the refusal logged")
        assert len(refusals) == 1


def test_running_out_of_descriptors_pauses_accept_with_one_warning() -> None:
    """With a low descriptor limit, 120 connections exhaust it: one warning, no error lines,
    and once they are gone the daemon answers again."""
    with tcp_daemon("--max-unauthenticated", "1000", fd_limit=64) as (box, port, pid):
        idle = open_sockets(pid)
        held = []
        try:
            for _ in range(120):
                with contextlib.suppress(OSError):
                    held.append(socket.create_connection(("127.0.0.1", port), timeout=0.5))
            wait_until(lambda: logged(box, "out of file descriptors"), what="the fd warning")
        finally:
            for sock in held:
                sock.close()
        wait_until(lambda: open_sockets(pid) <= idle, what="the connections closed")
        assert status_works(port, box)
        events = box.log_events()
    warnings = [e for e in events if e["event"] == "out of file descriptors: accepting paused"]
    assert len(warnings) == 1
    assert not [e for e in events if e["level"] in ("error", "critical")]
