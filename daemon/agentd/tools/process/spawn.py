"""Starting and waiting for child processes without holding the event loop.

``asyncio.create_subprocess_exec`` forks on the event loop and then blocks it until the child
has called ``exec`` (and Python 3.11's child watcher starts a thread per child and waits for
it). On a busy disk, ``exec`` of a shell can take hundreds of milliseconds, during which no
client is answered. So the tools start :class:`subprocess.Popen` in a worker thread and wrap
it in a :class:`Child`, whose :meth:`~Child.wait` waits for the exit through a pidfd watched
by the loop (a worker thread where the kernel has no ``pidfd_open``).

A child that must die with the daemon gets ``PR_SET_PDEATHSIG`` from ``setpriv --pdeathsig``
(:func:`death_signal_prefix`) where that exists, rather than from a ``preexec_fn``: Python
runs a ``preexec_fn`` in a full ``fork`` of the daemon (page tables and all, some 5 ms with a
typical heap, holding the interpreter lock), where without one it uses ``vfork`` (under 1 ms).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from functools import cache
from pathlib import Path

from agentd.paths import state_dir, which


class Child:
    """A started process: ``pid``, ``returncode`` (None while it runs) and :meth:`wait`."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self._exited: asyncio.Future[int] | None = None

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        """The exit status (negative: the signal that killed it). Any number of callers may
        wait; a cancelled wait leaves the others waiting."""
        if self._popen.returncode is not None:
            return self._popen.returncode
        if self._exited is None:
            self._exited = _watch_exit(self._popen)
        return await asyncio.shield(self._exited)


class HostedChild(Child):
    """A shell a sandbox host started (:mod:`agentd.tools.process.host_pool`): ``pid`` in
    this daemon's numbering, the exit status from the host's report."""

    def __init__(self, pid: int, exited: asyncio.Future[int]) -> None:
        self.pid = pid
        self._reported = exited

    @property
    def returncode(self) -> int | None:
        reported = self._reported
        return reported.result() if reported.done() else None

    async def wait(self) -> int:
        return await asyncio.shield(self._reported)


def exit_descriptor(pid: int) -> int | None:
    """A descriptor that becomes readable when process ``pid`` ends (a pidfd; the caller
    closes it), or None where the kernel has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _watch_exit(popen: subprocess.Popen[bytes]) -> asyncio.Future[int]:
    loop = asyncio.get_running_loop()
    pidfd = exit_descriptor(popen.pid)
    if pidfd is None:
        return asyncio.ensure_future(asyncio.to_thread(popen.wait))
    exited: asyncio.Future[int] = loop.create_future()

    def readable() -> None:
        code = popen.poll()
        if code is None:
            return  # not reapable yet (a spurious wake-up)
        loop.remove_reader(pidfd)
        os.close(pidfd)
        if not exited.done():
            exited.set_result(code)

    loop.add_reader(pidfd, readable)
    return exited


@cache
def death_signal_prefix() -> tuple[str, ...] | None:
    """The command prefix that makes a program get SIGKILL when the daemon dies
    (``setpriv --pdeathsig KILL --``), or None where util-linux's ``setpriv`` is missing or
    too old to know ``--pdeathsig`` (then the caller sets it in a ``preexec_fn``). Checked by
    running it, once per ``setpriv`` binary: the answer is kept in the state folder
    (:data:`PROBE_FILE`) beside the binary's inode, size and mtime, so a later process (a
    one-shot ``agentctl send``) does not start two more processes before its first command,
    and a changed binary is checked again."""
    setpriv = which("setpriv")
    if setpriv is None:
        return None
    prefix = (setpriv, "--pdeathsig", "KILL", "--")
    identity = _binary_identity(setpriv)
    works = _remembered(identity)
    if works is None:
        works = _runs(prefix)
        _remember(identity, works)
    return prefix if works else None


PROBE_FILE = "setpriv-probe"
"""In ``state_dir()``: one line, ``<binary identity> ok|no``."""


def _binary_identity(path: str) -> str | None:
    try:
        info = Path(path).stat()
    except OSError:
        return None
    return f"{path} {info.st_ino} {info.st_size} {info.st_mtime_ns}"


def _remembered(identity: str | None) -> bool | None:
    """The kept answer for this binary, or None (none kept, another binary, unreadable)."""
    if identity is None:
        return None
    try:
        line = (state_dir() / PROBE_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError):
        return None
    kept, _, answer = line.rpartition(" ")
    return {"ok": True, "no": False}.get(answer) if kept == identity else None


def _remember(identity: str | None, works: bool) -> None:
    """Keep the answer (replacing the file whole); a state folder that cannot be written
    only means the next process checks again."""
    if identity is None:
        return
    folder = state_dir()
    temporary = folder / f".{PROBE_FILE}.{os.getpid()}"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary.write_text(f"{identity} {'ok' if works else 'no'}\n", encoding="utf-8")
        temporary.replace(folder / PROBE_FILE)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _runs(prefix: tuple[str, ...]) -> bool:
    try:
        ran = subprocess.run(
            [*prefix, "true"], stdin=subprocess.DEVNULL, capture_output=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return ran.returncode == 0


async def end_process(process: asyncio.subprocess.Process, grace: float) -> None:
    """End ``process``, a helper the daemon talks to over its stdin: close its stdin and give
    it ``grace`` seconds to exit, then SIGTERM, then SIGKILL, each with the same wait."""
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    for send_signal in (None, process.terminate, process.kill):
        if send_signal is not None:
            with contextlib.suppress(ProcessLookupError):
                send_signal()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), grace)
            return
