"""The stdio transport's plumbing: protect the protocol descriptors, wrap them as streams.

:func:`detach_stdio` must run before anything can write to stdout (it is the first thing
``agentd serve --stdio`` does). :func:`open_stdio` turns the kept descriptors into an asyncio
reader/writer pair. Pipes, sockets and terminals are used directly; a regular file (``agentd
--stdio < requests.jsonl > answers.jsonl``) is relayed through a thread and a socket pair,
because the event loop cannot poll regular files.
"""

from __future__ import annotations

import asyncio
import os
import select
import socket
import stat
import sys
import threading

CHUNK = 256 * 1024


def detach_stdio() -> tuple[int, int]:
    """Return duplicates of fds 0 and 1 for the protocol; fd 0 becomes /dev/null, fd 1 stderr.

    Afterwards ``sys.stdout`` is ``sys.stderr``: a stray ``print()`` or a C library writing to
    descriptor 1 ends up in the log stream instead of corrupting the protocol. The duplicates
    are not inherited by child processes.
    """
    sys.stdout.flush()
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_in, protocol_out


def _pollable(fd: int) -> bool:
    """Whether the event loop can watch ``fd``: a pipe, socket or terminal, but not a regular
    file nor a device epoll refuses (``/dev/null`` is a character device that cannot be
    polled)."""
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return False
    if not hasattr(select, "epoll"):
        return True
    try:
        with select.epoll() as poller:
            poller.register(fd, select.EPOLLIN | select.EPOLLOUT)
    except OSError:
        return False
    return True


def _copy_in(fd: int, sink: socket.socket) -> None:
    with sink:
        while chunk := os.read(fd, CHUNK):
            sink.sendall(chunk)
    os.close(fd)


def _copy_out(source: socket.socket, fd: int) -> None:
    with source:
        while chunk := source.recv(CHUNK):
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
    os.close(fd)


def _relay(fd: int, *, reading: bool) -> int:
    """A pollable descriptor fed from (or draining into) ``fd`` by a thread."""
    ours, theirs = socket.socketpair()
    if reading:
        thread = threading.Thread(target=_copy_in, args=(fd, ours), daemon=True)
    else:
        thread = threading.Thread(target=_copy_out, args=(ours, fd), daemon=False)
    thread.start()
    return theirs.detach()


async def open_stdio(in_fd: int, out_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Asyncio streams over the protocol descriptors (ownership passes to the streams)."""
    loop = asyncio.get_running_loop()
    if not _pollable(in_fd):
        in_fd = _relay(in_fd, reading=True)
    if not _pollable(out_fd):
        out_fd = _relay(out_fd, reading=False)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(in_fd, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
        os.fdopen(out_fd, "wb", buffering=0),
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer
