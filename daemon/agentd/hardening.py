"""Process hardening and kernel feature probes (Linux, through ``ctypes`` system calls).

- :func:`make_undumpable`: ``prctl(PR_SET_DUMPABLE, 0)`` at daemon start. Processes of the
  same (non-root) user, such as the commands bash runs, can then neither read the daemon's
  ``/proc/<pid>/environ``, ``mem`` or ``fd/`` nor ptrace it, so the API keys in its memory
  stay out of their reach. Root (and ``CAP_SYS_PTRACE``) still can: run the daemon as an
  unprivileged user. Children get their own, dumpable process image on ``execve``.
- :func:`landlock_abi`: the kernel's Landlock ABI version (0: unavailable), used to confine
  bash (:mod:`agentd.tools.landlock`).
- :func:`openat2_available`: whether ``openat2(RESOLVE_BENEATH)`` works, used by the file
  tools' race-free sandbox (:mod:`agentd.tools.safeopen`).
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
SYS_OPENAT2 = 437
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
    from agentd.tools.safeopen import probe_openat2

    return probe_openat2()
