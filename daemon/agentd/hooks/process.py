"""Running one hook command: ``bash -c`` with the event on stdin, its output capped, its
process group killed at the timeout.

The command starts like a bash tool call (:mod:`agentd.tools.process.shell`): in a worker
thread (the fork and exec never hold the event loop), in a new session (its own process
group) carrying a marker (:mod:`agentd.tools.process.proctree`), with ``SIGKILL`` when the
daemon dies, under the session's confinement (a bubblewrap argv prefix or a Landlock ruleset).
Unlike a tool call, stdin is a pipe holding the event's JSON and stdout and stderr are read
apart.

A flood cannot hurt the daemon: each stream keeps its first :data:`OUTPUT_CAP` bytes; past
that the reading end is closed, so the hook's next write fails (``SIGPIPE``/``EPIPE``) and
the result says the output was cut. At the timeout, or when the awaiting task is cancelled,
the hook's group and every marked process get ``SIGTERM``, then ``SIGKILL`` after a short
grace.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import BinaryIO

import msgspec

from agentd.tools.process.proctree import MARKER_VAR, new_marker, signal_tree
from agentd.tools.process.shell import bash_path, prepare_child, terminate_tree
from agentd.tools.process.spawn import Child, death_signal_prefix

OUTPUT_CAP = 64 * 1024
"""Bytes kept of a hook's stdout, and of its stderr."""
KILL_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL for a hook that outlived its timeout."""
DRAIN_SECONDS = 0.2
"""How long to wait for the output pipes after the hook exited (a background child it
left may hold them open)."""


class HookRun(msgspec.Struct, frozen=True):
    """How a hook command ended: ``exit_code`` None when a signal or the timeout killed it;
    ``stdout``/``stderr`` decoded (invalid UTF-8 replaced), each at most
    :data:`OUTPUT_CAP` bytes (``cut`` names the streams that were longer)."""

    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str
    duration_ms: float
    cut: tuple[str, ...] = ()


class _Capped(asyncio.Protocol):
    """Keeps the first :data:`OUTPUT_CAP` bytes of a pipe; closes it past that."""

    def __init__(self, done: asyncio.Future[None]) -> None:
        self.data = bytearray()
        self.cut = False
        self.done = done
        self.transport: asyncio.ReadTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        room = OUTPUT_CAP - len(self.data)
        self.data += data[:room]
        if len(data) > room and self.transport is not None:
            self.cut = True
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


_Started = tuple[Child, int, int, int]
_Confined = tuple[int | None, tuple[str, ...], tuple[int, ...]]
"""A Landlock ruleset (or None), an argv prefix, the descriptors the prefix reads."""


async def run_hook_command(
    command: str,
    *,
    stdin: bytes,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    ruleset: int | None = None,
    wrapper: Sequence[str] = (),
    pass_fds: Sequence[int] = (),
) -> HookRun:
    """Run ``command`` (see the module docstring); re-raises CancelledError after killing
    it. ``ruleset``/``wrapper``/``pass_fds``: the session's confinement, as the bash tool
    gets it."""
    marker = new_marker()
    started = time.monotonic()
    env = {**env, MARKER_VAR: marker}
    confined = (ruleset, tuple(wrapper), tuple(pass_fds))
    child, *fds = await _start_or_discard(marker, command, cwd, env, confined)
    readers, timed_out = await _converse(child, marker, fds, stdin, timeout)
    code = child.returncode
    return HookRun(
        exit_code=None if timed_out or code is None or code < 0 else code,
        timed_out=timed_out,
        stdout=readers[0].text(),
        stderr=readers[1].text(),
        duration_ms=round((time.monotonic() - started) * 1000, 1),
        cut=tuple(name for name, r in zip(("stdout", "stderr"), readers, strict=True) if r.cut),
    )


async def _start_or_discard(
    marker: str,
    command: str,
    cwd: Path,
    env: dict[str, str],
    confined: _Confined,
) -> _Started:
    """Start the hook in a worker thread; one started for a task cancelled meanwhile is
    killed and released when the thread returns."""
    starting = asyncio.ensure_future(asyncio.to_thread(_start, command, cwd, env, confined))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        starting.add_done_callback(partial(_discard, marker))
        raise


async def _converse(
    child: Child, marker: str, fds: list[int], stdin: bytes, timeout: float
) -> tuple[list[_Capped], bool]:
    """Feed stdin, read stdout and stderr (capped), wait for the exit (killing the tree at
    the timeout, or on cancel); the readers and whether it timed out."""
    loop = asyncio.get_running_loop()
    stdin_fd, out_fd, err_fd = fds
    readers = [_Capped(loop.create_future()), _Capped(loop.create_future())]
    pipes = [os.fdopen(out_fd, "rb", buffering=0), os.fdopen(err_fd, "rb", buffering=0)]
    writer = os.fdopen(stdin_fd, "wb", buffering=0)
    transports: list[asyncio.BaseTransport] = []
    try:
        for pipe, reader in zip(pipes, readers, strict=True):
            transports.append((await loop.connect_read_pipe(partial(_same, reader), pipe))[0])
        transports.append(await _feed(loop, writer, stdin))
        timed_out = await _wait(child, timeout, marker)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(r.done for r in readers)), DRAIN_SECONDS)
    except asyncio.CancelledError:
        await asyncio.shield(terminate_tree(child, KILL_GRACE, marker))
        raise
    finally:
        for opened in transports:
            opened.close()
        for file in (*pipes, writer):
            file.close()
    return readers, timed_out


def _same(reader: _Capped) -> _Capped:
    return reader


def _discard(marker: str, starting: asyncio.Future[_Started]) -> None:
    """A hook started for a task cancelled meanwhile: kill it and close its pipes."""
    if starting.cancelled() or starting.exception() is not None:
        return
    child, *fds = starting.result()
    signal_tree(child.pid, marker, signal.SIGKILL)
    for fd in fds:
        os.close(fd)
    reaper = asyncio.ensure_future(child.wait())
    _reaping.add(reaper)
    reaper.add_done_callback(_reaping.discard)


_reaping: set[asyncio.Future[int]] = set()


async def _feed(
    loop: asyncio.AbstractEventLoop, pipe: BinaryIO, data: bytes
) -> asyncio.BaseTransport:
    """Write ``data`` to the hook's stdin and close it, without waiting for the hook to read
    (a hook that never reads just leaves it unread; a closed pipe is ignored)."""
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, pipe)
    assert isinstance(transport, asyncio.WriteTransport)
    transport.write(data)
    transport.write_eof()
    return transport


async def _wait(child: Child, timeout: float, marker: str) -> bool:
    """Wait for the hook; at the timeout kill its tree. True when it timed out."""
    try:
        await asyncio.wait_for(child.wait(), timeout)
    except TimeoutError:
        await terminate_tree(child, KILL_GRACE, marker)
        return True
    return False


def _start(command: str, cwd: Path, env: dict[str, str], confined: _Confined) -> _Started:
    """In a worker thread: start the shell; returns it and its stdin (write end), stdout and
    stderr (read ends) descriptors, the child's ends closed here."""
    ruleset, wrapper, extra_fds = confined
    fds = [os.pipe(), os.pipe(), os.pipe()]
    (in_read, in_write), (out_read, out_write), (err_read, err_write) = fds
    prefix = death_signal_prefix() if ruleset is None else None
    prepare = None if prefix is not None else partial(prepare_child, os.getpid(), ruleset)
    try:
        popen = subprocess.Popen(
            [*(prefix or ()), *wrapper, bash_path(), "-c", command], stdin=in_read,
            stdout=out_write, stderr=err_write, cwd=cwd, env=env, start_new_session=True,
            preexec_fn=prepare, pass_fds=extra_fds,
        )  # fmt: skip
    except BaseException:
        for fd in (in_write, out_read, err_read):
            os.close(fd)
        raise
    finally:
        for fd in (in_read, out_write, err_write):
            os.close(fd)
    return Child(popen), in_write, out_read, err_read
