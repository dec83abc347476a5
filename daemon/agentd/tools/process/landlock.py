"""Confining bash with Landlock (Linux 5.13+) under ``sandbox = "workspace"``.

:func:`write_ruleset` builds, in the daemon, a Landlock ruleset that handles every right that
changes the filesystem (write, truncate, create, remove, rename/link across folders) and
grants them only beneath the workspace, the session's temp dir (``TMPDIR`` of the command) and
on ``/dev/null``-like devices; where the kernel offers it, it also refuses abstract Unix
sockets outside the domain and, when the session's rules give bash no network, every TCP
connect and bind. Reading and executing stay unrestricted. :func:`confine` runs
in the forked child before ``exec`` (``preexec_fn``): ``PR_SET_NO_NEW_PRIVS`` and
``landlock_restrict_self`` with that ruleset, so bash and everything it starts can write
nowhere else, whatever user it runs as (root included). The shell also loads the seccomp
filter of :mod:`agentd.tools.process.seccomp` (no Unix-domain sockets).

Where the kernel has no Landlock (:func:`agentd.hardening.landlock_abi` is 0), commands run
unconfined and the session says so in a ``session_warning``.

:func:`search_ruleset` is the stricter domain grep runs in under the sandbox (ripgrep, and
the Python backend's search process): reading only beneath the workspace (plus the
``.gitignore`` files above it and the files the program needs to start), writing nowhere.
"""

from __future__ import annotations

import ctypes
import errno
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

from agentd.hardening import landlock_abi, libc
from agentd.tools.process.spill import tmp_root

_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_SYS_CREATE_RULESET = 444
_RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_ANY = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("handled_access_fs", ctypes.c_uint64),)


class _RulesetAttrNet(ctypes.Structure):
    """The ruleset attributes of ABI 4 and 5: TCP rights."""

    _fields_ = (("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64))


class _RulesetAttrScoped(ctypes.Structure):
    """The ruleset attributes of ABI 6+: TCP rights (ABI 4) and scopes."""

    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def handled_rights(abi: int) -> int:
    """Every filesystem-changing right this ABI knows."""
    rights = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_ANY
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def write_ruleset(writable: list[Path], *, network: bool = True) -> int | None:
    """A ruleset descriptor allowing writes only beneath ``writable`` and on the devices;
    None when the kernel has no Landlock. Where the kernel offers them, no connection to an
    abstract Unix socket outside the domain (ABI 6), and without ``network`` no TCP connect
    or bind at all (ABI 4: loopback to the daemon's ports included). The caller closes it
    after the child started."""
    abi = landlock_abi()
    library = libc()
    if abi == 0 or library is None:
        return None
    rights = handled_rights(abi)
    attr: ctypes.Structure = _RulesetAttr(rights)
    net = 0 if network else NET_BIND_TCP | NET_CONNECT_TCP
    if abi >= 6:
        attr = _RulesetAttrScoped(rights, net, SCOPE_ABSTRACT_UNIX_SOCKET)
    elif abi >= 4 and net:
        attr = _RulesetAttrNet(rights, net)
    size = ctypes.c_size_t(ctypes.sizeof(attr))
    fd = library.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if fd < 0:
        return None
    try:
        for folder in writable:
            _allow(int(fd), folder, rights)
        file_rights = rights & (WRITE_FILE | TRUNCATE)
        for device in DEVICES:
            if Path(device).exists():
                _allow(int(fd), Path(device), file_rights)
    except OSError:
        os.close(int(fd))
        raise
    return int(fd)


def read_ruleset(trees: list[Path], files: list[Path]) -> int | None:
    """A ruleset that allows reading only beneath ``trees`` and reading/executing only
    ``files`` (a program, its loader and libraries), and no change to the filesystem
    anywhere; None when the kernel has no Landlock. Used to confine ripgrep to the
    workspace. The caller closes it after the child started."""
    abi = landlock_abi()
    library = libc()
    if abi == 0 or library is None:
        return None
    rights = handled_rights(abi) | EXECUTE | READ_FILE | READ_DIR
    attr = _RulesetAttr(rights)
    size = ctypes.c_size_t(ctypes.sizeof(attr))
    fd = int(library.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0))
    if fd < 0:
        return None
    try:
        for tree in trees:
            _allow(fd, tree, READ_FILE | READ_DIR)
        for file in files:
            _allow(fd, file, READ_FILE | EXECUTE)
    except OSError:
        os.close(fd)
        raise
    return fd


def search_ruleset(workspace: Path, program: list[Path]) -> int | None:
    """:func:`read_ruleset` for a search of ``workspace``: reading beneath it, the regular
    ``.gitignore`` files above it (their rules apply inside) and the ``program`` files."""
    root = Path(os.path.realpath(workspace))
    above = [folder / ".gitignore" for folder in root.parents]
    ignores = [path for path in above if path.is_file() and not path.is_symlink()]
    return read_ruleset([root], program + ignores)


def program_files(program: str) -> list[Path]:
    """The files ``program`` needs to start: itself, and for a dynamically linked ELF its
    loader, its shared libraries and the loader's cache (asked from the loader with
    ``LD_TRACE_LOADED_OBJECTS``; a static program prints its version instead)."""
    files = [Path(program).resolve()]
    try:
        traced = subprocess.run(
            [program, "--version"], capture_output=True, timeout=10, check=False,
            env={"LD_TRACE_LOADED_OBJECTS": "1", "PATH": os.defpath},
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return files
    for line in traced.stdout.decode("utf-8", "replace").splitlines():
        words = line.replace("=>", " ").split()
        files += [Path(word) for word in words if word.startswith("/") and Path(word).exists()]
    cache = Path("/etc/ld.so.cache")
    return [*files, cache] if len(files) > 1 and cache.exists() else files


def _allow(ruleset: int, path: Path, rights: int) -> None:
    library = libc()
    target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneath(rights, target)
        done = library.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0)
        if done != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), str(path))
    finally:
        os.close(target)


_prctl = libc().prctl if libc() is not None else None
_syscall = libc().syscall if libc() is not None else None


def confine(ruleset: int) -> None:
    """In the forked child: restrict this process (and what it runs) to ``ruleset``.
    On failure the child kills itself rather than run unconfined."""
    if not restrict_self(ruleset):
        os.write(2, b"agentd: cannot confine the command with Landlock\n")
        os._exit(126)


def restrict_self(ruleset: int) -> bool:
    """Restrict the calling thread (and what it starts) to ``ruleset``, for good."""
    if _prctl is None or _syscall is None:
        return False
    if _prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return bool(_syscall(_SYS_RESTRICT_SELF, ruleset, 0) == 0)


def spawn_confined(argv: list[str], ruleset: int, **popen: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv, **popen)`` with the child in ``ruleset``, without a ``preexec_fn``.

    Landlock and ``no_new_privs`` bind the calling *thread*, and a child inherits them from
    the thread that started it. So a fresh thread restricts itself, starts the child and ends:
    the daemon's own threads stay unconfined, and with no ``preexec_fn`` Python starts the
    child with ``vfork`` instead of copying the daemon's address space with ``fork``. Raises
    OSError when the thread cannot be restricted (the child is then never started).
    """
    outcome: list[subprocess.Popen[bytes] | BaseException] = []

    def start() -> None:
        try:
            if not restrict_self(ruleset):
                raise OSError(errno.EPERM, "cannot restrict the thread with Landlock")
            outcome.append(subprocess.Popen(argv, **popen))
        except BaseException as error:  # handed to the caller's thread
            outcome.append(error)

    thread = threading.Thread(target=start, name="agentd-landlock-spawn", daemon=True)
    thread.start()
    thread.join()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def unconfined_warning(abi: int) -> str | None:
    """The warning for a workspace sandbox on a kernel without Landlock (None: confined)."""
    if abi > 0:
        return None
    return (
        "bash is not confined to the workspace: this kernel has no Landlock (Linux 5.13+ "
        "with landlock in its LSM list). The file tools stay sandboxed; commands bash runs "
        "can write wherever your user can."
    )


def session_tmp(session_id: str) -> Path:
    """The session's own temp dir (``0700``), the only writable place outside the workspace."""
    base = tmp_root()
    path = base / (session_id or "default")
    for level in (base, path):
        try:
            level.mkdir(mode=0o700)
        except FileExistsError:
            if level.is_symlink() or level.stat().st_uid != os.getuid():
                raise OSError(errno.EPERM, "not a private directory", str(level)) from None
    return path
