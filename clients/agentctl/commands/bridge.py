"""``agentctl bridge [--socket PATH]``: relay stdin/stdout to the daemon's Unix socket.

For clients that can only spawn a process and talk to its stdio (editors): every byte read
from stdin goes to the socket and every byte from the socket goes to stdout, unchanged, so
either framing works end to end. When nobody listens on the socket, the daemon is started
(``agentd serve --socket PATH``, detached in its own session, output appended to its log file)
and connecting is retried for up to :data:`CONNECT_TIMEOUT` seconds.

When stdin ends, the socket's sending side is shut down; the daemon answers what it already
received and closes, and the bridge exits 0. It exits 1 when the daemon cannot be reached, or
when the socket's folder or the process listening on it is not this user's (the message on
stderr says which; nothing is relayed and no daemon is started then).
Imports only the standard library, :mod:`agentd.paths` and :mod:`agentctl.launch`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
import threading
import time
from collections.abc import Callable

from agentctl import launch
from agentd import paths

CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a freshly started daemon to accept connections."""
EXITED_GRACE = 0.5
"""Seconds to keep polling after the started daemon exited (a racing daemon may be starting)."""
POLL_INTERVAL = 0.05
CHUNK = 256 * 1024


def _try_connect(path: str) -> socket.socket | None:
    """A socket connected to this user's daemon at ``path``, or None when nobody listens.

    Raises :class:`agentd.paths.UnsafeSocketError` when the socket's folder or the listening
    process is not this user's (checked before connecting and before relaying a byte).
    """
    try:
        paths.check_socket_folder(path)
    except paths.UnsafeSocketError:
        raise
    except OSError:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    try:
        paths.check_socket_peer(sock, path)
    except paths.UnsafeSocketError:
        sock.close()
        raise
    return sock


async def connect_or_start(path: str, timeout: float = CONNECT_TIMEOUT) -> socket.socket | None:
    """A connected socket to the daemon at ``path``, starting the daemon if needed."""
    sock = _try_connect(path)
    if sock is not None:
        return sock
    pid: int | None = launch.spawn_detached(
        launch.daemon_argv("serve", "--socket", path), launch.log_file()
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await asyncio.sleep(POLL_INTERVAL)
        sock = _try_connect(path)
        if sock is not None:
            return sock
        if pid is not None and launch.reap(pid) is not None:
            # It exited: another daemon may have won the race to the lock and is about to
            # listen, so poll a little longer; otherwise it failed (its log says why).
            pid = None
            deadline = min(deadline, time.monotonic() + EXITED_GRACE)
    return None


def _stdin_to_socket(sock: socket.socket) -> None:
    try:
        while chunk := os.read(0, CHUNK):
            sock.sendall(chunk)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        return


def _socket_to_stdout(sock: socket.socket, finish: Callable[[int], None]) -> None:
    try:
        while chunk := sock.recv(CHUNK):
            view = memoryview(chunk)
            while view:
                view = view[os.write(1, view) :]
    except OSError:
        pass
    finish(0)


async def pump(sock: socket.socket) -> int:
    """Relay stdin → ``sock`` and ``sock`` → stdout until the daemon closes; return 0."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[int] = loop.create_future()

    def settle(code: int) -> None:
        if not done.done():
            done.set_result(code)

    def finish(code: int) -> None:
        loop.call_soon_threadsafe(settle, code)

    threads = (
        threading.Thread(target=_stdin_to_socket, args=(sock,), daemon=True),
        threading.Thread(target=_socket_to_stdout, args=(sock, finish), daemon=True),
    )
    for thread in threads:
        thread.start()
    try:
        return await done
    finally:
        sock.close()


async def run_bridge(socket_path: str | None) -> int:
    """Bridge stdio to the daemon's socket (default path if None); return the exit code."""
    path = launch.socket_path(socket_path)
    try:
        sock = await connect_or_start(path)
    except paths.UnsafeSocketError as exc:
        print(f"agentctl bridge: {exc}", file=sys.stderr)
        return 1
    if sock is None:
        log_path = launch.log_file()
        print(
            f"agentctl bridge: cannot reach agentd at {path} (started it; see {log_path})",
            file=sys.stderr,
        )
        tail = launch.log_tail(log_path, lines=5)
        if tail:
            print(tail, file=sys.stderr)
        return 1
    return await pump(sock)


def bridge_main(argv: list[str]) -> int:
    """Entry point of ``agentctl bridge [--socket PATH]``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="agentctl bridge", description="Relay stdin/stdout to the agentd socket."
    )
    parser.add_argument("--socket", metavar="PATH", help="the daemon's Unix socket")
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run_bridge(args.socket))
    except KeyboardInterrupt:
        return 130
