"""A seccomp filter that keeps sandboxed commands off the daemon's Unix sockets.

The daemon's control channel is a Unix socket; hiding its folder in the sandbox's mount
namespace is not enough (a path can be found again, through another process's ``/proc/PID/root``
say), and connecting is not a write a read-only mount refuses. So a sandboxed command may not
create a Unix-domain socket at all: :func:`program` is a classic BPF program (built here, once
per daemon, with ``struct`` packing) that

* checks the architecture first: a system call made through another ABI (i386 ``int 0x80``,
  x32 on x86_64) kills the process, since its numbers would mean other calls;
* answers ``socket(AF_UNIX, …)`` with ``EPERM`` (pathname and abstract sockets alike; an
  abstract name needs no file at all), while ``socketpair`` keeps working (it reaches no one);
* answers the ``io_uring`` calls with ``ENOSYS`` (an io_uring request can open a socket
  without the ``socket`` system call); programs fall back to ordinary I/O;
* allows everything else.

Under bubblewrap the program goes in through ``--seccomp FD`` (:func:`program_fd`, a pipe
holding the bytes: each call reads its own copy, so concurrent calls never share an offset);
in the Landlock fallback the child installs it itself before ``exec`` (:func:`install`, the
``preexec_fn`` that Landlock needs anyway). On an architecture this module does not know,
:func:`program` is None and no filter is installed (the mount and network namespaces and the
daemon's peer check still stand).
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from functools import cache

from agentd.hardening import libc

_LD_W_ABS = 0x20
_JEQ = 0x15
_JGE = 0x35
_RET = 0x06
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
AF_UNIX = 1
_EPERM = 1
_ENOSYS = 38
_X32_BIT = 0x40000000
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

_ARCHES = {
    # machine: (AUDIT_ARCH_*, socket, io_uring_setup/enter/register, has x32)
    "x86_64": (0xC000003E, 41, (425, 426, 427), True),
    "aarch64": (0xC00000B7, 198, (425, 426, 427), False),
}


_Row = tuple[int, int | str, int | str, int]


def _resolve(rows: list[tuple[str | None, _Row]]) -> list[tuple[int, int, int, int]]:
    """Rows with optional labels, whose jump targets may name a label, as plain rows (a
    jump's offset counts the instructions after it)."""
    where = {label: index for index, (label, _) in enumerate(rows) if label}
    resolved = []
    for index, (_, (code, true, false, k)) in enumerate(rows):
        offsets = [t if isinstance(t, int) else where[t] - index - 1 for t in (true, false)]
        resolved.append((code, offsets[0], offsets[1], k))
    return resolved


def instructions(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The filter for ``machine`` (``platform.machine()``) as ``(code, jt, jf, k)`` rows, or
    None when this module does not know its system call numbers."""
    known = _ARCHES.get(machine)
    if known is None:
        return None
    arch, socket_nr, uring, x32 = known
    rows: list[tuple[str | None, _Row]] = [
        (None, (_LD_W_ABS, 0, 0, 4)),  # seccomp_data.arch
        (None, (_JEQ, 0, "kill", arch)),
        (None, (_LD_W_ABS, 0, 0, 0)),  # seccomp_data.nr
    ]
    if x32:
        rows.append((None, (_JGE, "kill", 0, _X32_BIT)))
    rows.append((None, (_JEQ, "socket", 0, socket_nr)))
    rows += [(None, (_JEQ, "enosys", 0, number)) for number in uring]
    rows += [
        ("allow", (_RET, 0, 0, RET_ALLOW)),
        ("kill", (_RET, 0, 0, RET_KILL_PROCESS)),
        ("enosys", (_RET, 0, 0, RET_ERRNO | _ENOSYS)),
        # the low 32 bits of args[0], the domain (both ABIs here are little-endian)
        ("socket", (_LD_W_ABS, 0, 0, 16)),
        (None, (_JEQ, 0, 1, AF_UNIX)),
        (None, (_RET, 0, 0, RET_ERRNO | _EPERM)),
        (None, (_RET, 0, 0, RET_ALLOW)),  # jumps only go forward: a second ALLOW
    ]
    return _resolve(rows)


@cache
def program() -> bytes | None:
    """This machine's filter as the bytes of a ``struct sock_filter`` array (compiled once
    per process), None on an unknown architecture."""
    rows = instructions(platform.machine())
    if rows is None:
        return None
    return b"".join(struct.pack("=HBBI", *row) for row in rows)


def program_fd() -> int | None:
    """A descriptor holding :func:`program` for ``bwrap --seccomp FD`` (None: no filter).
    A new pipe each call, filled and with its write end closed; bwrap reads it to the end,
    and the caller closes it once the child started."""
    code = program()
    if code is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, code)  # a few hundred bytes: far below a pipe's buffer
    except OSError:
        os.close(read)
        raise
    finally:
        os.close(write)
    return read


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


_buffer: ctypes.Array[ctypes.c_char] | None = None
_fprog: _SockFprog | None = None


def prepare() -> bool:
    """Build, in the daemon, what :func:`install` hands the kernel (before any fork, so the
    child only makes system calls). False when there is no filter for this machine."""
    global _buffer, _fprog
    if _fprog is not None:
        return True
    code = program()
    if code is None or libc() is None:
        return False
    _buffer = ctypes.create_string_buffer(code, len(code))
    _fprog = _SockFprog(len(code) // 8, ctypes.addressof(_buffer))
    return True


def prepared() -> bool:
    """Whether :func:`prepare` built a filter in this process."""
    return _fprog is not None


def install() -> bool:
    """In the forked child (after :func:`prepare` in the parent): set ``no_new_privs`` and
    load the filter for this process and everything it starts. False when it could not."""
    library = libc()
    if _fprog is None or library is None:
        return False
    if library.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    pointer = ctypes.c_void_p(ctypes.addressof(_fprog))  # a full pointer, not a C int
    return bool(library.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, pointer, 0, 0) == 0)
