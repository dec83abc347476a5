"""The sandbox host program: runs inside a session's bubblewrap sandbox as
``python -I -S hostproc.py FD IDLE`` and starts that session's shells there, so a bash call
costs a ``fork`` instead of a new set of namespaces (:mod:`agentd.tools.process.host_pool`).

It imports a few of the standard library's C modules and nothing else (the sandbox has no
site-packages path, and its start is paid on the session's second call: ``signal`` and
``socket`` would bring ``enum``, ``json`` would bring ``re``), and trusts its one peer, the
daemon, which holds the other end of the ``SOCK_SEQPACKET`` socket ``FD``. One message per
packet:

* daemon → host: a :mod:`marshal`-encoded ``{"id", "argv", "cwd", "env"}`` with two
  descriptors attached (``SCM_RIGHTS``): the write end of the output pipe and of the cwd
  channel. The host forks;
  the child starts a new session, takes ``/dev/null`` as stdin, the output pipe as stdout and
  stderr, the cwd channel as descriptor 3, and execs ``argv``.
* child → daemon, before ``exec``: :data:`REPORT` ``(STARTED, id, 0)``. The daemon reads the
  child's pid, as its own pid namespace numbers it, from the message's kernel-attached credentials
  (``SO_PASSCRED``), so it can signal the process group and find the call's processes.
* host → daemon, when the shell has been reaped: :data:`REPORT` ``(EXITED, id, status)``,
  the exit status as :class:`subprocess.Popen` reports it (negative: the signal that killed
  it). The daemon decodes nothing richer than this fixed layout from inside the sandbox.

The host ends on end-of-file from the daemon, or after ``IDLE`` seconds with no shell
running and no request; its process namespace ends with it, and with that every process
left in it. The sandbox it runs in (mounts, seccomp filter, no capabilities) is inherited by
every shell it starts.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # built in: `signal` imports enum
import _socket
import marshal
import os
import select
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

REPORT = struct.Struct("<iqi")
"""What the host and its children send the daemon: kind, request id, exit status."""
STARTED, EXITED = 1, 2
MAX_MESSAGE = 1 << 20
SOL_SOCKET = 1
SCM_RIGHTS = 1


def main() -> None:
    channel = _socket.socket(fileno=int(sys.argv[1]))
    os.set_inheritable(channel.fileno(), False)
    idle = float(sys.argv[2])
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    _signal.set_wakeup_fd(wake_write)
    _signal.signal(_signal.SIGCHLD, lambda *_: None)
    running: dict[int, int] = {}
    try:
        serve(channel, wake_read, running, idle)
    finally:
        for pid in running:
            _kill_group(pid)


def serve(channel: _socket.socket, wake: int, running: dict[int, int], idle: float) -> None:
    """Answer requests and report exits until the daemon hangs up or the host is idle."""
    readable = [channel.fileno(), wake]
    while True:
        ready, _, _ = select.select(readable, [], [], None if running else idle)
        if not ready:
            return
        if wake in ready:
            os.read(wake, 4096)
            reap(channel, running)
        if channel.fileno() in ready:
            data, fds = _receive(channel)
            if not data:
                return
            try:
                request = marshal.loads(data)
                running[spawn(channel, request, fds)] = request["id"]
            finally:
                for fd in fds:
                    os.close(fd)


def _receive(channel: _socket.socket) -> tuple[bytes, list[int]]:
    data, ancillary, _, _ = channel.recvmsg(MAX_MESSAGE, 64)
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == SOL_SOCKET and kind == SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += struct.unpack(f"{usable // 4}i", payload[:usable])
    return data, fds


def spawn(channel: _socket.socket, request: dict[str, Any], fds: list[int]) -> int:
    """Fork the request's shell (see the module docstring); the child's pid."""
    pid = os.fork()
    if pid:
        return pid
    try:
        os.setsid()
        _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
        _signal.set_wakeup_fd(-1)
        channel.send(REPORT.pack(STARTED, request["id"], 0))
        stdin = os.open("/dev/null", os.O_RDONLY)
        os.dup2(stdin, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[0], 2)
        os.dup2(fds[1], 3)
        os.chdir(request["cwd"])
        argv = request["argv"]
        os.execve(argv[0], argv, request["env"])
    except BaseException as error:  # the child reports it and exits, always
        try:
            os.write(2, f"agentd: cannot start the command: {error}\n".encode())
        finally:
            os._exit(127)
    raise AssertionError  # unreachable: execve replaced the process or _exit ended it


def reap(channel: _socket.socket, running: dict[int, int]) -> None:
    """Report every shell that has exited."""
    while running:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        request_id = running.pop(pid, None)
        if request_id is not None:
            channel.send(REPORT.pack(EXITED, request_id, os.waitstatus_to_exitcode(status)))


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, _signal.SIGKILL)
    except OSError:
        return


if __name__ == "__main__":
    main()
