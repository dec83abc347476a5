"""Sandbox hosts: one long-lived bubblewrap sandbox per session and confinement, in which that
session's foreground bash calls start with a ``fork`` (:mod:`agentd.tools.process.hostproc`)
instead of each paying for a new ``bwrap`` and its namespaces (about 5 ms of CPU a call).

Which calls use one (:func:`host_for`): a session's first call under a given confinement
(the bwrap argv prefix, which names the workspace, the temp dir and the control files that
exist at that moment) runs in a ``bwrap`` of its own, so a one-shot run starts no host; the
second one starts the host in the background and also runs on its own; later calls run in
the host (waiting for it if it is still starting, some 30 ms). When the confinement changes
(a ``.git`` or ``.agentd.toml`` appeared in the workspace, so it must now be mounted
read-only) the argv differs and the calls move to a new host: a host never serves a
confinement other than the one it started with.

What the calls of one host share, and per-call sandboxes did not: a process namespace (a
command sees and may signal the session's other commands and the jobs they left running) and
its loopback network. Jobs a command leaves running go on until the host ends: when its
session closes (:func:`retire`), after :data:`IDLE_SECONDS` with no command, or with the
daemon (``--die-with-parent``). Background processes (``background: true``) keep a sandbox
each. A host that dies or cannot start only costs speed: its calls fall back to a ``bwrap``
of their own (and a confinement whose host ended before running anything gets no other).
A host's end is seen on its channel, or on its ``bwrap`` process (a pidfd): a ``bwrap``
killed before its sandbox armed ``--die-with-parent`` has its process group killed.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import logging
import marshal
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from agentd.tools.process.hostproc import EXITED, REPORT, STARTED
from agentd.tools.process.spawn import exit_descriptor

IDLE_SECONDS = 60.0
"""A host with no command running ends after this long without a request."""
START_SECONDS = 10.0
"""How long a hosted call may take to report that its shell started."""
MAX_REQUEST = 256 << 10
"""Larger requests (a huge environment) run in a bwrap of their own."""
MAX_REMEMBERED = 1024

_UCRED = struct.Struct("3i")
_log = logging.getLogger("agentd.tools")  # JSON lines through agentd.log

Key = tuple[str, ...]


class HostEnded(OSError):
    """The host is gone (or never came up): the call runs in a sandbox of its own."""


class SandboxHost:
    """One running host and the calls it has started. Use on the event loop only."""

    def __init__(
        self, process: subprocess.Popen[bytes], channel: socket.socket, owner: str
    ) -> None:
        self.process = process
        self.channel = channel
        self.owner = owner
        """The session it serves, and is retired with."""
        self.alive = True
        self.served = 0
        """Commands it started."""
        self._next_id = 0
        self._started: dict[int, asyncio.Future[int]] = {}
        self._exited: dict[int, asyncio.Future[int]] = {}
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(channel.fileno(), self._readable)
        self._exit_watch = exit_descriptor(process.pid)  # None: the channel tells alone
        if self._exit_watch is not None:
            self._loop.add_reader(self._exit_watch, self._bwrap_ended)

    async def start(
        self, argv: Sequence[str], cwd: Path, env: dict[str, str], out_write: int, cwd_write: int
    ) -> tuple[int, asyncio.Future[int]]:
        """Start ``argv`` in the host: its pid (this daemon's numbering) and a future of its
        exit status. Raises :class:`HostEnded` when the host cannot run it."""
        if not self.alive:
            raise HostEnded("the sandbox host has ended")
        self._next_id += 1
        request_id = self._next_id
        request = {"id": request_id, "argv": list(argv), "cwd": str(cwd), "env": env}
        payload = marshal.dumps(request)
        if len(payload) > MAX_REQUEST:
            raise HostEnded("the request is too large for the host")
        loop = asyncio.get_running_loop()
        started, exited = loop.create_future(), loop.create_future()
        self._started[request_id], self._exited[request_id] = started, exited
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [out_write, cwd_write]))]
        try:
            self.channel.sendmsg([payload], rights)
            async with asyncio.timeout(START_SECONDS):  # not wait_for: on 3.11 it may
                pid = await asyncio.shield(started)  # swallow a cancel that meets the result
        except asyncio.CancelledError:
            started.add_done_callback(_kill_started)  # it may start yet: it must not run on
            raise
        except TimeoutError:
            self.close()  # a host that does not answer is not trusted with later calls
            raise HostEnded("the sandbox host did not answer") from None
        except OSError as error:  # the send failed, or the host ended (close())
            self._started.pop(request_id, None)
            self._exited.pop(request_id, None)
            raise HostEnded(f"the sandbox host did not start the command: {error}") from None
        return pid, exited

    def _readable(self) -> None:
        while True:
            try:
                data, ancillary, _, _ = self.channel.recvmsg(65536, socket.CMSG_SPACE(12))
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.close()
                return
            self._dispatch(data, ancillary)

    def _bwrap_ended(self) -> None:
        """The host's ``bwrap`` ended (killed, say, before its sandbox set up
        ``--die-with-parent``): what it started may live on in its process group, the
        group leader's pid still held by its zombie: kill the group, then hang up."""
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.close()

    def _dispatch(self, data: bytes, ancillary: list[tuple[int, int, bytes]]) -> None:
        if len(data) != REPORT.size:
            return
        kind, request_id, status = REPORT.unpack(data)
        if kind == STARTED:
            started = self._started.pop(request_id, None)
            pid = _sender_pid(ancillary)
            if started is not None and not started.done() and pid is not None:
                self.served += 1
                started.set_result(pid)
        elif kind == EXITED:
            exited = self._exited.pop(request_id, None)
            if exited is not None and not exited.done():
                exited.set_result(status)

    def close(self) -> None:
        """Hang up: the host kills what it started and exits. Calls still waiting for their
        shell fail over; shells still running count as killed."""
        if not self.alive:
            return
        self.alive = False
        if not self._loop.is_closed():
            self._loop.remove_reader(self.channel.fileno())
        self.channel.close()
        if self._exit_watch is not None:
            if not self._loop.is_closed():
                self._loop.remove_reader(self._exit_watch)
            os.close(self._exit_watch)
            self._exit_watch = None
        for started in self._started.values():
            if not started.done():
                started.set_exception(HostEnded("the sandbox host has ended"))
        for exited in self._exited.values():
            if not exited.done():
                exited.set_result(-9)
        self._started.clear()
        self._exited.clear()
        _reap_later(self.process)


def _kill_started(started: asyncio.Future[int]) -> None:
    if not started.cancelled() and started.exception() is None:
        with contextlib.suppress(OSError):
            os.killpg(started.result(), signal.SIGKILL)


def _sender_pid(ancillary: list[tuple[int, int, bytes]]) -> int | None:
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(data) >= 12:
            pid, _, _ = _UCRED.unpack(data[:12])
            return pid if pid > 0 else None
    return None


def _reap_later(process: subprocess.Popen[bytes]) -> None:
    """Collect the host's exit off the event loop (it ends at once on the hang-up; a
    session's close may run after its loop stopped, so not through the loop's executor)."""
    if process.poll() is None:
        threading.Thread(target=process.wait, name="sandbox-host-reaper", daemon=True).start()


class _Pool:
    def __init__(self) -> None:
        self.hosts: dict[Key, SandboxHost] = {}
        self.launching: dict[Key, asyncio.Task[SandboxHost | None]] = {}
        self.seen: dict[Key, str] = {}
        self.broken: dict[Key, str] = {}
        """Confinements whose host could not start or ended before its first command: their
        calls keep a sandbox each (no host is tried again for them)."""


_pool = _Pool()


async def host_for(wrapper: Sequence[str], owner: str) -> SandboxHost | None:
    """The host for this confinement (``wrapper``, the bwrap argv prefix), waiting for it
    if it is starting, or None: then the call runs in a sandbox of its own, and on the
    owner's second call under it a host starts in the background (see the module
    docstring). ``owner`` is the session the host is retired with."""
    key = _key(wrapper)
    host = _pool.hosts.get(key)
    if host is not None:
        if host.alive:
            return host
        del _pool.hosts[key]
        if not host.served:  # it ended before running anything: it cannot run here
            _remember(_pool.broken, key, owner)
    if key in _pool.broken:
        return None
    launching = _pool.launching.get(key)
    if launching is not None:
        return await asyncio.shield(launching)
    if _pool.seen.get(key) != owner:
        _remember(_pool.seen, key, owner)
        return None
    task = asyncio.ensure_future(_launch(key, owner))
    _pool.launching[key] = task
    task.add_done_callback(lambda _: _pool.launching.pop(key, None))
    return None


def _remember(table: dict[Key, str], key: Key, owner: str) -> None:
    table[key] = owner
    while len(table) > MAX_REMEMBERED:
        del table[next(iter(table))]


def _key(wrapper: Sequence[str]) -> Key:
    """The confinement ``wrapper`` stands for: its argv with the seccomp program's
    descriptor (a new pipe per call) left out; the host gets a pipe of its own."""
    key = list(wrapper)
    for index, arg in enumerate(key[:-1]):
        if arg == "--seccomp":
            key[index + 1] = _SECCOMP_FD
    return tuple(key)


_SECCOMP_FD = "{seccomp}"


async def _launch(key: Key, owner: str) -> SandboxHost | None:
    spawning = _Spawning()
    try:
        process, channel = await asyncio.to_thread(spawning.run, key)
    except asyncio.CancelledError:  # the loop is ending: the host must not outlive the launch
        spawning.give_up()
        raise
    except OSError as error:
        _log.warning("sandbox_host_failed", extra={"error": str(error)})
        _remember(_pool.broken, key, owner)
        return None
    host = SandboxHost(process, channel, owner)
    if _pool.seen.get(key) != owner:  # the session closed meanwhile
        host.close()
        return None
    _pool.hosts[key] = host
    return host


class _Spawning:
    """A host being started on a worker thread, and whether its launch was given up (then
    the host is hung up as soon as it exists, on whichever side sees it last)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._given_up = False
        self._made: tuple[subprocess.Popen[bytes], socket.socket] | None = None

    def run(self, key: Key) -> tuple[subprocess.Popen[bytes], socket.socket]:
        made = _spawn(key)
        with self._lock:
            if not self._given_up:
                self._made = made
                return made
        _hang_up(*made)
        raise HostEnded("the host's launch was given up")

    def give_up(self) -> None:
        with self._lock:
            self._given_up = True
            made, self._made = self._made, None
        if made is not None:
            _hang_up(*made)


def _hang_up(process: subprocess.Popen[bytes], channel: socket.socket) -> None:
    channel.close()  # the host exits on the hang-up
    _reap_later(process)


def _spawn(key: Key) -> tuple[subprocess.Popen[bytes], socket.socket]:
    """Start ``python -I -S hostproc.py`` under the bwrap prefix ``key`` (blocking)."""
    from agentd.tools.process import seccomp

    program_fd = seccomp.program_fd() if _SECCOMP_FD in key else None
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        ours.setblocking(False)
        prefix = [str(program_fd) if arg == _SECCOMP_FD else arg for arg in key]
        program = str(Path(__file__).with_name("hostproc.py"))
        argv = [
            *prefix,
            sys.executable,
            "-I",
            "-S",
            program,
            str(theirs.fileno()),
            str(IDLE_SECONDS),
        ]
        fds = (theirs.fileno(),) if program_fd is None else (theirs.fileno(), program_fd)
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/", env={},
            start_new_session=True, pass_fds=fds,
        )  # fmt: skip
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
        if program_fd is not None:
            os.close(program_fd)
    return process, ours


def retire(owner: str) -> None:
    """End the hosts of session ``owner`` (when it closes); their leftover jobs end too."""
    for key in [key for key, host in _pool.hosts.items() if host.owner == owner]:
        _pool.hosts.pop(key).close()
    for table in (_pool.seen, _pool.broken):
        for key in [key for key, who in table.items() if who == owner]:
            del table[key]


def hosts() -> list[SandboxHost]:
    """The running hosts (for tests and diagnostics)."""
    return [host for host in _pool.hosts.values() if host.alive]
