"""Running one shell command for the bash tool: process group, output capture, timeouts.

:func:`run_shell` starts ``bash -c`` in a new session (its own process group) with stdin from
``/dev/null`` and stdout+stderr merged into one pipe. Output is fed to an
:class:`OutputCapture` and streamed, throttled, to ``on_output``. On timeout or task
cancellation the whole group, and every process that inherited the call's marker (see
:mod:`agentd.tools.process.proctree`: children that called ``setsid`` or daemonized too), gets
SIGTERM, then SIGKILL after a grace period, so no child survives. When the command ends
normally, background jobs it started are left alone, but the output pipe is closed shortly
after the shell exits (start them with their output redirected to a file). The shell gets
SIGKILL when the daemon dies (:func:`~agentd.tools.process.spawn.death_signal_prefix`, or
bubblewrap's ``--die-with-parent`` under the workspace sandbox), and the call
is recorded in a registry so that the next daemon kills what is left
(:mod:`agentd.tools.process.orphans`). The shell's final working directory is reported through a
private pipe by an EXIT trap, never through stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Iterator, Sequence
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import msgspec

from agentd.paths import which
from agentd.tools.process.orphans import die_with_parent, register, unregister
from agentd.tools.process.output import OutputCapture, UpdateThrottle
from agentd.tools.process.proctree import (
    MARKER_VAR,
    new_marker,
    signal_marked,
    signal_tree,
    tree_alive,
)
from agentd.tools.process.spawn import Child, HostedChild, death_signal_prefix

if TYPE_CHECKING:
    from agentd.tools.process.host_pool import SandboxHost

DRAIN_SECONDS = 0.2
POLL_SECONDS = 0.02
KILLED_WAIT_SECONDS = 2.0
"""How long a killed tree may take to be gone before the call ends anyway."""


class ShellOutcome(msgspec.Struct, frozen=True):
    """How a command ended. ``exit_code`` is None when a signal killed the shell."""

    exit_code: int | None
    signal: str | None
    timed_out: bool
    duration_ms: float
    cwd: str | None
    registry_entry: Path | None = None
    """The call's registry entry, left for the caller to drop with :func:`release` (off the
    event loop) when it asked for that (``leave_entry``); else None: already dropped."""


@cache
def bash_path() -> str:
    """The bash executable (looked up once on the daemon's PATH)."""
    return which("bash") or "/bin/bash"


class _PipeReader(asyncio.Protocol):
    def __init__(self, sink: Callable[[bytes], None], closed: asyncio.Future[None]) -> None:
        self.sink = sink
        self.closed = closed

    def data_received(self, data: bytes) -> None:
        self.sink(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def run_shell(
    command: str,
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    capture: OutputCapture,
    on_output: Callable[[str], None],
    kill_grace: float = 2.0,
    update_interval: float = 0.05,
    registry: Path | None = None,
    ruleset: int | None = None,
    wrapper: Sequence[str] = (),
    pass_fds: Sequence[int] = (),
    host_owner: str | None = None,
    leave_entry: bool = False,
) -> ShellOutcome:
    """Run ``command``; see the module docstring. Re-raises CancelledError after killing.

    ``registry``: the directory where the call is recorded while it runs, so that a daemon
    starting after this one was killed can end what is left (:mod:`agentd.tools.process.orphans`).
    ``ruleset``: a Landlock ruleset the shell is confined to (:mod:`agentd.tools.process.landlock`).
    ``wrapper``: an argv prefix the shell runs under (:mod:`agentd.tools.process.mountns`).
    ``pass_fds``: descriptors the wrapper reads (its seccomp program), left open in the child.
    A shell in a Landlock domain also gets the seccomp filter of
    :mod:`agentd.tools.process.seccomp` (prepared by the caller).
    ``host_owner``: the session whose sandbox host may run the call when ``wrapper`` is a
    bwrap prefix (:mod:`agentd.tools.process.host_pool`); None: a sandbox of its own.
    ``leave_entry``: when the command ends normally, its registry entry is not dropped but
    returned in the outcome, for a caller that has a worker-thread hop of its own to drop it
    in (one hop fewer per call); after a failure or a cancel it is always dropped here.
    """
    loop = asyncio.get_running_loop()
    throttle = UpdateThrottle(on_output, update_interval)
    started = loop.time()
    marker = new_marker()
    started_shell = await _start_or_kill(
        command,
        cwd,
        {**env, MARKER_VAR: marker},
        (ruleset, tuple(wrapper), tuple(pass_fds)),
        registry,
        host_owner,
    )
    proc, pipe, cwd_read, entry = started_shell
    closed: asyncio.Future[None] = loop.create_future()

    pacer = _Pacer(capture)

    def sink(data: bytes) -> None:
        capture.feed(data)
        throttle.push(capture.decode_delta(data))
        pacer.check()

    transport: asyncio.ReadTransport | None = None
    ended = False
    try:
        transport, _ = await loop.connect_read_pipe(lambda: _PipeReader(sink, closed), pipe)
        pacer.transport = transport
        timed_out = await _wait(proc, timeout, kill_grace, marker)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(closed), DRAIN_SECONDS)
        ended = True
    except asyncio.CancelledError:
        await _terminate_after_cancel(proc, kill_grace, marker)
        raise
    finally:
        if transport is not None:
            transport.close()
        pipe.close()  # now, not on a later loop turn that a closing loop may never run
        throttle.push(capture.decode_delta(b"", final=True))
        throttle.close()
        final_cwd = _read_cwd(cwd_read)
        left = entry if leave_entry and ended and not capture.spilled else None
        if (entry is not None and left is None) or capture.spilled:  # the disk may be slow
            await asyncio.shield(asyncio.to_thread(_finish, entry, capture))
    return ShellOutcome(
        exit_code=proc.returncode if (proc.returncode or 0) >= 0 else None,
        signal=_signal_name(proc.returncode),
        timed_out=timed_out,
        duration_ms=round((loop.time() - started) * 1000, 1),
        cwd=final_cwd,
        registry_entry=left,
    )


def _finish(entry: Path | None, capture: OutputCapture) -> None:
    """In a worker thread: drop the call from the registry and close its spill file."""
    unregister(entry)
    capture.close()


def prepare_child(parent_pid: int, ruleset: int | None) -> None:
    """In the forked child: die with the daemon; enter the Landlock domain if given, and
    load the seccomp filter (:func:`agentd.tools.process.seccomp.install`, a no-op when the
    parent prepared none)."""
    die_with_parent(parent_pid)
    if ruleset is not None:
        from agentd.tools.process import seccomp
        from agentd.tools.process.landlock import confine

        confine(ruleset)
        if seccomp.prepared() and not seccomp.install():
            os.write(2, b"agentd: cannot load the seccomp filter\n")
            os._exit(126)


class _Pacer:
    """Stops reading the command's output while too much of it waits for the spill file (a
    slow disk), so memory stays bounded; the command blocks on its full pipe meanwhile."""

    HIGH = 8 << 20
    LOW = 2 << 20

    def __init__(self, capture: OutputCapture) -> None:
        self.capture = capture
        self.transport: asyncio.ReadTransport | None = None
        self.paused = False

    def check(self) -> None:
        if self.transport is None or self.paused or self.capture.backlog <= self.HIGH:
            return
        self.transport.pause_reading()
        self.paused = True
        asyncio.get_running_loop().call_later(0.01, self._resume)

    def _resume(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        if self.capture.backlog > self.LOW:
            asyncio.get_running_loop().call_later(0.01, self._resume)
            return
        self.paused = False
        self.transport.resume_reading()


_Confinement = tuple[int | None, tuple[str, ...], tuple[int, ...]]
"""A Landlock ruleset (or None), an argv prefix (or empty) for the shell, and the
descriptors the prefix reads."""


async def start_shell(
    command: str, cwd: Path, env: dict[str, str], confinement: _Confinement, registry: Path | None
) -> _Started:
    """Start ``bash -c command`` as :func:`run_shell` does (``env`` carrying its marker), for
    a caller that waits for it itself (background processes): the shell, the read ends of
    its output and of its cwd channel, and its registry entry (:func:`release`)."""
    return await _start_or_kill(command, cwd, env, confinement, registry)


def release(entry: Path | None) -> None:
    """Drop a started shell's registry entry (blocking: off the event loop)."""
    unregister(entry)


async def _start_or_kill(
    command: str,
    cwd: Path,
    env: dict[str, str],
    confinement: _Confinement,
    registry: Path | None,
    host_owner: str | None = None,
) -> _Started:
    """Start the shell in the session's sandbox host when it has one for this confinement
    (:func:`_start_hosted`), else in a worker thread (:func:`_start`), so neither the fork and
    exec nor the registry write holds the event loop. A cancel that lands meanwhile kills
    every process carrying the call's marker, and whatever the thread still starts is killed
    and released when it returns."""
    if confinement[1] and host_owner is not None:
        from agentd.tools.process import host_pool

        host = await host_pool.host_for(confinement[1], host_owner)
        if host is not None:
            with contextlib.suppress(host_pool.HostEnded):
                return await _start_hosted(host, command, cwd, env)
    starting = asyncio.ensure_future(
        asyncio.to_thread(_start, command, cwd, env, confinement, registry)
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        marker = env[MARKER_VAR]
        starting.add_done_callback(partial(_discard, marker))
        await asyncio.shield(asyncio.to_thread(signal_marked, -1, marker, signal.SIGKILL))
        raise


_Started = tuple[Child, BinaryIO, int, Path | None]


def _start(
    command: str, cwd: Path, env: dict[str, str], confinement: _Confinement, registry: Path | None
) -> _Started:
    """Start the shell (blocking); returns it, the read end of its output and of the cwd
    channel, and its registry entry."""
    ruleset, wrapper, extra_fds = confinement
    prefix: tuple[str, ...] | None = ()  # bwrap --die-with-parent: it dies with the daemon
    if not wrapper:
        prefix = death_signal_prefix() if ruleset is None else None
    prepare = None if prefix is not None else partial(prepare_child, os.getpid(), ruleset)
    with _shell_pipes() as (out_read, out_write, cwd_read, cwd_write):
        script = f"trap 'builtin pwd >&{cwd_write}' EXIT; {command}"
        popen = subprocess.Popen(
            [*(prefix or ()), *wrapper, bash_path(), "-c", script], stdin=subprocess.DEVNULL,
            stdout=out_write, stderr=out_write, cwd=cwd, env=env, start_new_session=True,
            pass_fds=(cwd_write, *extra_fds), preexec_fn=prepare,
        )  # fmt: skip
    entry = register(registry, popen.pid, env[MARKER_VAR]) if registry is not None else None
    return Child(popen), os.fdopen(out_read, "rb", buffering=0), cwd_read, entry


async def _start_hosted(
    host: SandboxHost, command: str, cwd: Path, env: dict[str, str]
) -> _Started:
    """Start the shell in a sandbox host. It needs no registry entry: it lives in the
    host's process namespace, which ends with the daemon."""
    script = f"trap 'builtin pwd >&3' EXIT; {command}"
    with _shell_pipes() as (out_read, out_write, cwd_read, cwd_write):
        pid, exited = await host.start([bash_path(), "-c", script], cwd, env, out_write, cwd_write)
    return HostedChild(pid, exited), os.fdopen(out_read, "rb", buffering=0), cwd_read, None


@contextlib.contextmanager
def _shell_pipes() -> Iterator[tuple[int, int, int, int]]:
    """A starting shell's output pipe and cwd channel (read, write, read, write): the write
    ends are closed once the start is over (the shell holds its own copies), the read ends
    too when it failed."""
    out_read, out_write = os.pipe()
    cwd_read, cwd_write = os.pipe()
    try:
        yield out_read, out_write, cwd_read, cwd_write
    except BaseException:
        os.close(out_read)
        os.close(cwd_read)
        raise
    finally:
        os.close(out_write)
        os.close(cwd_write)


_reaping: set[asyncio.Task[int]] = set()


def _discard(marker: str, starting: asyncio.Future[_Started]) -> None:
    """A shell started for a cancelled call: kill its tree, release its pipes and entry,
    and reap it."""
    if starting.cancelled() or starting.exception() is not None:
        return
    proc, pipe, cwd_read, entry = starting.result()
    signal_tree(proc.pid, marker, signal.SIGKILL)
    pipe.close()
    os.close(cwd_read)
    unregister(entry)
    reaper = asyncio.ensure_future(proc.wait())
    _reaping.add(reaper)
    reaper.add_done_callback(_reaping.discard)


async def _wait(proc: Child, timeout: float, grace: float, marker: str) -> bool:
    """Wait for the shell; on timeout kill its tree. Returns True when it timed out."""
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        await terminate_tree(proc, grace, marker)
        return True
    return False


async def _terminate_after_cancel(proc: Child, grace: float, marker: str) -> None:
    killer = asyncio.ensure_future(terminate_tree(proc, grace, marker))
    try:
        await asyncio.shield(killer)
    except asyncio.CancelledError:
        signal_tree(proc.pid, marker, signal.SIGKILL)


async def terminate_tree(proc: Child, grace: float, marker: str) -> None:
    """SIGTERM the group of ``proc`` and every process carrying ``marker``; SIGKILL whatever
    is left after ``grace`` s (see :mod:`agentd.tools.process.proctree`)."""
    signal_tree(proc.pid, marker, signal.SIGTERM)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while loop.time() < deadline:
        if proc.returncode is not None and not tree_alive(proc.pid, marker):
            return
        await asyncio.sleep(POLL_SECONDS)
    signal_tree(proc.pid, marker, signal.SIGKILL)
    await proc.wait()
    deadline = loop.time() + KILLED_WAIT_SECONDS  # a busy machine may take a moment to reap
    while tree_alive(proc.pid, marker) and loop.time() < deadline:
        signal_tree(proc.pid, marker, signal.SIGKILL)
        await asyncio.sleep(POLL_SECONDS)


def _read_cwd(fd: int) -> str | None:
    try:
        os.set_blocking(fd, False)
        data = os.read(fd, 65536)
    except BlockingIOError:
        data = b""
    finally:
        os.close(fd)
    text = data.decode("utf-8", "surrogateescape").rstrip("\n")
    return text or None


def _signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
