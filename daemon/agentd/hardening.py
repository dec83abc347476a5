"""Process hardening and kernel feature probes (Linux, through ``ctypes`` system calls).

- :func:`make_undumpable`: ``prctl(PR_SET_DUMPABLE, 0)`` at daemon start. Processes of the
  same (non-root) user, such as the commands bash runs, can then neither read the daemon's
  ``/proc/<pid>/environ``, ``mem`` or ``fd/`` nor ptrace it, so the API keys in its memory
  stay out of their reach. Root (and ``CAP_SYS_PTRACE``) still can: run the daemon as an
  unprivileged user. Children get their own, dumpable process image on ``execve``.
- :func:`landlock_abi`: the kernel's Landlock ABI version (0: unavailable), used to confine
  bash (:mod:`agentd.tools.process.landlock`).
- :func:`openat2_available`: whether ``openat2(RESOLVE_BENEATH)`` works, used by the file
  tools' race-free sandbox (:mod:`agentd.tools.files.safeopen`).
"""

from __future__ import annotations

import errno
import functools
import os
import sys
from typing import Any

PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
SYS_OPENAT2 = 437
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_BENEATH = 0x08
SYS_LANDLOCK_CREATE_RULESET = 444
LANDLOCK_CREATE_RULESET_VERSION = 1


@functools.cache
def libc() -> Any:
    """The C library, with errno kept (None off Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    library = ctypes.CDLL(None, use_errno=True)
    library.syscall.restype = ctypes.c_long
    return library


def make_undumpable() -> bool:
    """Mark this process non-dumpable; False when the platform cannot."""
    library = libc()
    return library is not None and library.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0


def is_dumpable() -> bool:
    """Whether this process is dumpable (True off Linux: nothing protects it)."""
    library = libc()
    return library is None or library.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0


@functools.cache
def landlock_abi() -> int:
    """The Landlock ABI version of the running kernel, 0 when it has none (or it is off)."""
    library = libc()
    if library is None or os.uname().machine not in ("x86_64", "aarch64"):
        return 0
    import ctypes

    version = library.syscall(
        SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), LANDLOCK_CREATE_RULESET_VERSION
    )
    return max(int(version), 0)


@functools.cache
def openat2_available() -> bool:
    """Whether ``openat2`` with ``RESOLVE_BENEATH`` works on this kernel."""
    try:
        root = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.close(openat2_beneath(root, ".", os.O_PATH | os.O_DIRECTORY, 0))
        return True
    except OSError:
        return False
    finally:
        os.close(root)


def openat2_beneath(dir_fd: int, relative: str, flags: int, mode: int) -> int:
    """``openat2(dir_fd, relative)`` with ``RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS``: the
    kernel refuses any resolution that leaves ``dir_fd``. Raises OSError (ENOSYS when the
    kernel lacks openat2)."""
    import ctypes

    library = libc()
    if library is None:
        raise OSError(errno.ENOSYS, "openat2 is not available")
    creating = flags & os.O_CREAT or flags & os.O_TMPFILE == os.O_TMPFILE
    mode = mode if creating else 0  # a mode without O_CREAT/O_TMPFILE is EINVAL
    how = _OpenHow()(flags | os.O_CLOEXEC, mode, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
    fd = library.syscall(
        SYS_OPENAT2,
        ctypes.c_int(dir_fd),
        ctypes.c_char_p(os.fsencode(relative)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), relative)
    return int(fd)


@functools.cache
def _OpenHow() -> Any:
    import ctypes

    class OpenHow(ctypes.Structure):
        _fields_ = (
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        )

    return OpenHow
