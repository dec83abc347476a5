"""An early start for the private daemon of ``agentctl send --daemon-process`` and
``chat --stdio``.

A private daemon's own start-up (an interpreter, asyncio, msgspec, the RPC layer) takes about
as long as this client's imports. :func:`start_early` therefore starts it first, before
argparse, asyncio or any other module of the client is imported, so that the two start-ups
run side by side on separate cores instead of one after the other.

:func:`spawn_stdio <agentctl.client.spawn_stdio>` then calls :func:`adopt`: the early daemon
is used when it is exactly the one it would start (the same command line, working directory,
inherited environment and log file); otherwise it is discarded (its stdin closes, so it
exits at once) and a new one is spawned. A command that never connects (a usage error,
``--help``) leaves the early daemon to exit the same way when this process ends.

The early part imports only ``os`` (and :mod:`agentctl.launch`, which imports the standard
library only).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

_COMMANDS = ("send", "chat")


class EarlyDaemon:
    """A private daemon started before the command line was parsed: its pid, the client's
    ends of its stdin and stdout pipes, and what it was started with."""

    def __init__(
        self, pid: int, stdin_fd: int, stdout_fd: int, argv: list[str], cwd: str, log: str | None
    ) -> None:
        self.pid = pid
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.argv = argv
        self.cwd = cwd
        self.log = log

    def discard(self) -> None:
        """Close the pipes: the daemon reads EOF and exits (it is reaped when it can be)."""
        for fd in (self.stdin_fd, self.stdout_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, os.WNOHANG)


_early: EarlyDaemon | None = None


_PRIVATE_DAEMON_FLAG = {"send": "--daemon-process", "chat": "--stdio"}
"""The flag that asks each command for a private daemon process (``send --stdio`` runs its
session in agentctl's own process: :mod:`agentctl.local`)."""


def wants_private_daemon(args: list[str]) -> bool:
    """True for ``send --daemon-process`` and ``chat --stdio`` with no ``--help`` or
    ``--cwd`` (the daemon is started in the current directory) before a ``--``."""
    if not args or args[0] not in _COMMANDS:
        return False
    head = args[: args.index("--")] if "--" in args else args
    if "-h" in head or "--help" in head:
        return False
    if any(arg == "--cwd" or arg.startswith("--cwd=") for arg in head):
        return False
    return _PRIVATE_DAEMON_FLAG[args[0]] in head


def start_early(args: list[str]) -> None:
    """Start the private daemon now if the command line asks for one (see the module doc).

    Any failure is silent: the daemon is then started the usual way, which reports it.
    """
    global _early
    if _early is not None or not wants_private_daemon(args):
        return
    try:
        _early = _spawn()
    except OSError:
        _early = None


def _spawn() -> EarlyDaemon:
    from agentctl import launch

    argv = launch.daemon_argv("serve", "--stdio")
    cwd = str(Path.cwd().resolve())
    log = launch.private_log()
    log_fd = os.open(log if log else os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    try:
        actions = [
            (os.POSIX_SPAWN_DUP2, stdin_r, 0),
            (os.POSIX_SPAWN_DUP2, stdout_w, 1),
            (os.POSIX_SPAWN_DUP2, log_fd, 2),
        ]
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions, setsid=True)
    except OSError:
        os.close(stdin_w)
        os.close(stdout_r)
        raise
    finally:
        for fd in (stdin_r, stdout_w, log_fd):
            os.close(fd)
    return EarlyDaemon(pid, stdin_w, stdout_r, argv, cwd, log)


def take(argv: list[str], cwd: str | None, log: str | None, env: Any) -> EarlyDaemon | None:
    """The early daemon if it matches a spawn of ``argv`` in ``cwd`` (None: this process's
    directory) logging to ``log``, with the inherited environment (``env`` None); else None
    (and the early one, if any, is discarded)."""
    global _early
    early, _early = _early, None
    if early is None:
        return None
    wanted_cwd = str((Path(cwd) if cwd is not None else Path.cwd()).resolve())
    if env is None and early.argv == argv and early.cwd == wanted_cwd and early.log == log:
        return early
    early.discard()
    return None


class AdoptedProcess:
    """The asyncio side of an :class:`EarlyDaemon`: ``stdin``/``stdout`` streams, ``wait``
    and ``terminate``, as :class:`asyncio.subprocess.Process` offers them."""

    def __init__(self, pid: int, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader) -> None:
        self.pid = pid
        self.stdin: asyncio.StreamWriter | None = stdin
        self.stdout: asyncio.StreamReader | None = stdout
        self.returncode: int | None = None

    async def wait(self) -> int:
        """Wait for the daemon to exit (a pidfd when the kernel has them); its exit code."""
        import asyncio

        if self.returncode is not None:
            return self.returncode
        loop = asyncio.get_running_loop()
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            _, status = await asyncio.to_thread(os.waitpid, self.pid, 0)
        else:
            exited: asyncio.Future[None] = loop.create_future()

            def on_exit() -> None:
                if not exited.done():
                    exited.set_result(None)

            loop.add_reader(pidfd, on_exit)
            try:
                await exited
            finally:
                loop.remove_reader(pidfd)
                os.close(pidfd)
            _, status = os.waitpid(self.pid, 0)
        self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def terminate(self) -> None:
        """Send SIGTERM (nothing if the daemon was already collected)."""
        import signal

        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)


async def adopt(early: EarlyDaemon, limit: int) -> AdoptedProcess:
    """Wrap an early daemon's pipes in asyncio streams (reads up to ``limit`` bytes a line)."""
    import asyncio

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(early.stdout_fd, "rb", 0)
    )
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop),
        os.fdopen(early.stdin_fd, "wb", 0),
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return AdoptedProcess(early.pid, writer, reader)
