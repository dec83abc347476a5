"""Transports of the daemon: stdio, a Unix socket, TCP behind a token, the HTTP front-end.

``stdio``
    One client on the process's stdin/stdout. :func:`detach_stdio` keeps duplicates of the
    real descriptors for the protocol, points descriptor 1 at stderr and descriptor 0 at
    /dev/null and sets ``sys.stdout = sys.stderr``, so no stray write can corrupt the stream.
    The daemon exits 0 once stdin ends and the last answers are written.
``socket``
    Many clients on a Unix socket (default ``$XDG_RUNTIME_DIR/agentd/agentd.sock``). The
    directory is created 0700 before binding and the socket is bound under umask 077;
    ``<name>.lock`` beside it is ``flock``-ed so a second daemon refuses to start; a socket
    file left by a crashed daemon (connect refused) is removed; ``<name>.pid`` holds the pid;
    peers of another uid (``SO_PEERCRED``) are disconnected at once, and so are the daemon's
    own tool processes (:func:`refuse_tool_peer`).
``http`` (beside any of the others, or alone)
    The browser front-end (:mod:`agentd.web`, imported only then): see :class:`HttpListener`.
``tcp``
    Loopback only unless ``--allow-remote``. Clients must pass the token from the token file
    (0600, created on first use; default ``$XDG_RUNTIME_DIR/agentd/tcp.token``) in
    ``initialize``; the address and token path are printed to stderr and logged. A loopback
    peer that is one of the daemon's tool processes is disconnected at once.

The socket, lock, pid and token files are recorded (:func:`agentd.paths.add_control_path`)
so sandboxed commands do not see them.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
import stat
import struct
import sys
from functools import partial
from pathlib import Path
from typing import Any

from agentd import paths
from agentd.daemon import Daemon, Listener
from agentd.hosts import is_loopback
from agentd.housekeeping import RateLimit
from agentd.log import get_logger
from agentd.stdio import open_stdio

log = get_logger("agentd.listen")

MAX_SOCKET_PATH = 107
"""Longest Unix socket path Linux accepts (``sun_path`` minus the terminating NUL)."""


class ListenError(Exception):
    """A transport cannot start; the message says why and what to do (exit code 1)."""


# --- stdio ------------------------------------------------------------------------------


class StdioListener:
    """Serves exactly one client on the protocol descriptors from :func:`detach_stdio`."""

    def __init__(self, in_fd: int, out_fd: int) -> None:
        self._fds = (in_fd, out_fd)
        self._task: asyncio.Task[None] | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def start(self, daemon: Daemon) -> None:
        reader, self._writer = await open_stdio(*self._fds)
        loop = asyncio.get_running_loop()
        self._task = loop.create_task(self._serve(daemon, reader, self._writer))

    @staticmethod
    async def _serve(
        daemon: Daemon, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            await daemon.attach(reader, writer, transport="stdio", name="stdio")
        finally:
            daemon.request_shutdown()

    async def stop(self) -> None:
        """Nothing to stop: there is only the one client."""

    async def close(self) -> None:
        if self._task is not None:
            await asyncio.wait({self._task})
        if self._writer is not None:
            self._writer.close()


# --- Unix socket ------------------------------------------------------------------------


class UnixListener:
    """Accepts clients of ``allowed_uid`` (default: this process's uid) on a Unix socket."""

    def __init__(self, path: Path, *, allowed_uid: int | None = None) -> None:
        self.path = path
        self.lock_path = path.with_suffix(".lock")
        self.pid_path = path.with_suffix(".pid")
        self.allowed_uid = os.getuid() if allowed_uid is None else allowed_uid
        self._server: asyncio.AbstractServer | None = None
        self._lock_fd: int | None = None

    async def start(self, daemon: Daemon) -> None:
        if len(os.fsencode(self.path)) > MAX_SOCKET_PATH:
            raise ListenError(
                f"socket path {self.path} is too long (the limit is {MAX_SOCKET_PATH} bytes)"
            )
        _prepare_private_dir(self.path.parent, tighten=self.path == paths.default_socket_path())
        self._lock_fd = _lock(self.lock_path, self.path, self.pid_path)
        _remove_stale_socket(self.path)
        old_umask = os.umask(0o077)
        try:
            self._server = await asyncio.start_unix_server(
                partial(self._accept, daemon), path=os.fspath(self.path)
            )
        finally:
            os.umask(old_umask)
        _write_private(self.pid_path, f"{os.getpid()}\n")
        for private in (self.path, self.lock_path, self.pid_path):
            paths.add_control_path(private)  # hidden from sandboxed commands
        log.info("listening", socket=str(self.path), pid_file=str(self.pid_path))

    async def _accept(
        self, daemon: Daemon, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        pid, uid = peer_credentials(writer.get_extra_info("socket"))
        if uid is not None and uid != self.allowed_uid:
            log.warning("peer rejected: other user", peer_uid=uid, peer_pid=pid)
            writer.transport.abort()
            return
        if pid is not None and await refuse_tool_peer(writer, {pid}):
            return
        await attach_quietly(daemon, reader, writer, transport="socket", name=f"unix pid={pid}")

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self.path.unlink(missing_ok=True)
            self.pid_path.unlink(missing_ok=True)
            self._server = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


async def attach_quietly(
    daemon: Daemon, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, **how: Any
) -> None:
    """``daemon.attach``, ending normally when the daemon's shutdown cancels it.

    A stream-server task that ends cancelled makes asyncio (3.11) log an error traceback
    ("Exception in callback StreamReaderProtocol.connection_made…"); the connection's end is
    already logged once, at info level, by ``attach``.
    """
    with contextlib.suppress(asyncio.CancelledError):
        await daemon.attach(reader, writer, **how)


async def refuse_tool_peer(writer: asyncio.StreamWriter, pids: set[int]) -> bool:
    """Close the connection and return True when one of ``pids`` (the peer's processes) is a
    tool process of this daemon (:func:`agentd.tools.process.peers.tool_reason`): a command
    a session runs never drives the daemon, sandboxed or not."""
    from agentd.tools.process.peers import tool_reason

    for pid in pids:
        reason = await asyncio.to_thread(tool_reason, pid)
        if reason is not None:
            log.warning("peer rejected: a tool process", peer_pid=pid, reason=reason)
            writer.transport.abort()
            return True
    return False


async def refuse_tcp_tool_peer(writer: asyncio.StreamWriter) -> bool:
    """Close a loopback TCP connection and return True when the process at its other end is
    a tool process of this daemon (:func:`agentd.tools.process.peers.tcp_tool_peer`; the TCP
    transport and the web front-end). A peer that cannot be checked (the daemon is out of
    descriptors or threads) is refused too."""
    peer: Any = writer.get_extra_info("peername")
    local: Any = writer.get_extra_info("sockname")
    if not isinstance(peer, tuple) or not isinstance(local, tuple) or not is_loopback(peer[0]):
        return False
    ends = ((peer[0], peer[1]), (local[0], local[1]))
    try:
        from agentd.tools.process.peers import tcp_tool_peer

        reason = await asyncio.to_thread(tcp_tool_peer, *ends)
    except (OSError, RuntimeError):  # out of descriptors or threads: it cannot be checked
        writer.transport.abort()
        return True
    if reason is None:
        return False
    log.warning("peer rejected: a tool process", peer=f"{peer[0]}:{peer[1]}", reason=reason)
    writer.transport.abort()
    return True


def peer_credentials(sock: socket.socket | None) -> tuple[int | None, int | None]:
    """``(pid, uid)`` of the process at the other end of a Unix socket (None if unknown)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if sock is None or option is None:
        return None, None
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, 12))
    return pid, uid


def _prepare_private_dir(directory: Path, *, tighten: bool) -> None:
    """Create ``directory`` with mode 0700; refuse one owned by another user."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = directory.stat()
    if info.st_uid != os.getuid():
        raise ListenError(f"{directory} belongs to another user; choose another --socket")
    if tighten and info.st_mode & 0o077:
        directory.chmod(0o700)


def _lock(lock_path: Path, socket_path: Path, pid_path: Path) -> int:
    """Hold an exclusive flock on ``lock_path`` for the daemon's lifetime."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        try:
            owner = f" (pid {int(pid_path.read_text())})"
        except (OSError, ValueError):
            owner = ""
        raise ListenError(f"another agentd is already serving {socket_path}{owner}") from None
    return fd


def _remove_stale_socket(path: Path) -> None:
    """Unlink a socket file nobody listens on; refuse a live one or a non-socket file."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise ListenError(f"{path} exists and is not a socket; remove it or choose another path")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(os.fspath(path))
    except (ConnectionRefusedError, FileNotFoundError):
        path.unlink(missing_ok=True)
        log.info("removed stale socket", socket=str(path))
        return
    except OSError as exc:
        raise ListenError(f"cannot check the existing socket {path}: {exc}") from None
    finally:
        probe.close()
    raise ListenError(f"another process is already listening on {path}")


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


# --- TCP --------------------------------------------------------------------------------


class TcpListener:
    """Accepts TCP clients; each must present the token in ``initialize``."""

    def __init__(
        self, host: str, port: int, *, token_file: Path, allow_remote: bool = False
    ) -> None:
        self.host = host
        self.port = port
        self.token_file = token_file
        self.allow_remote = allow_remote
        self._server: asyncio.AbstractServer | None = None
        self._refused = 0
        self._checking = 0
        self._warned = RateLimit(60.0)

    async def start(self, daemon: Daemon) -> None:
        if not self.allow_remote and not is_loopback(self.host):
            raise ListenError(
                f"refusing to listen on {self.host}: not a loopback address "
                "(pass --allow-remote to accept remote clients)"
            )
        daemon.tcp_token = load_or_create_token(self.token_file)
        paths.add_control_path(self.token_file)  # hidden from sandboxed commands
        self._server = await asyncio.start_server(
            partial(self._accept, daemon), self.host, self.port
        )
        host, port = self._server.sockets[0].getsockname()[:2]
        print(f"agentd: listening on {host}:{port}; token in {self.token_file}", file=sys.stderr)
        log.info("listening", host=host, port=port, token_file=str(self.token_file))

    async def _accept(
        self, daemon: Daemon, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        peer: Any = writer.get_extra_info("peername")
        name = f"tcp {peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "tcp"
        if daemon.unauthenticated() + self._checking >= daemon.options.max_unauthenticated:
            self._refused += 1
            if self._warned.ready():
                log.warning(
                    "too many unauthenticated TCP clients: refusing new ones",
                    limit=daemon.options.max_unauthenticated,
                    refused=self._refused,
                )
            writer.transport.abort()
            return
        self._checking += 1  # counted as unauthenticated while its peer is checked
        try:
            refused = await refuse_tcp_tool_peer(writer)
        finally:
            self._checking -= 1
        if refused:
            return
        await attach_quietly(daemon, reader, writer, transport="tcp", name=name, authorized=False)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()

    async def close(self) -> None:
        await self.stop()


def load_or_create_token(path: Path) -> str:
    """The token stored in ``path``, or a new one (:func:`agentd.paths.load_or_create_token`);
    :class:`ListenError` for a file that is not private or holds no usable token."""
    try:
        return paths.load_or_create_token(path)
    except paths.UnsafeTokenError as exc:
        raise ListenError(str(exc)) from None


# --- HTTP and several listeners ----------------------------------------------------------


class HttpListener:
    """Starts the daemon's HTTP front-end (``--http``) and prints the page's one-time link.

    The daemon owns the front-end (``Daemon.start_web``; ``daemon/web`` may also start it), so
    it is stopped with the daemon rather than by this listener.
    """

    def __init__(self, host: str, port: int, *, allow_remote: bool = False) -> None:
        self.host = host
        self.port = port
        self.allow_remote = allow_remote

    async def start(self, daemon: Daemon) -> None:
        from agentd.web.server import WebListenError

        try:
            server = await daemon.start_web(self.host, self.port, allow_remote=self.allow_remote)
        except WebListenError as exc:
            raise ListenError(str(exc)) from None
        server.announce()

    async def stop(self) -> None:
        """Nothing to do: the daemon stops its front-end."""

    async def close(self) -> None:
        """Nothing to do: the daemon closes its front-end."""


class Listeners:
    """Several listeners as one: started in order, stopped and closed in reverse order."""

    def __init__(self, *listeners: Listener) -> None:
        self.listeners = listeners

    async def start(self, daemon: Daemon) -> None:
        for listener in self.listeners:
            await listener.start(daemon)

    async def stop(self) -> None:
        for listener in reversed(self.listeners):
            await listener.stop()

    async def close(self) -> None:
        for listener in reversed(self.listeners):
            await listener.close()
