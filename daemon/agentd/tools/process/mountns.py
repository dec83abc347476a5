"""Confining bash with bubblewrap under ``sandbox = "workspace"``: a private mount namespace in
which the whole filesystem is read-only except the workspace and the session's temp dir, and
the workspace's control files stay read-only inside it.

Landlock grants rights on whole trees, so it cannot keep ``.git/`` or ``.agentd.toml``
read-only inside a writable workspace. A read-only bind mount in a private mount namespace
can: :func:`wrapper` returns the ``bwrap`` command line that runs the shell with

* ``/`` bound read-only, ``/dev`` a fresh minimal one (null, zero, tty, a private shm…);
* the workspace and the session's temp dir bound read-write;
* each control file or folder (:data:`~agentd.tools.files.protected.CONTROL_NAMES`) found
  directly in the workspace bound read-only over itself: writing it fails with "Read-only
  file system", and replacing, renaming or deleting it with "Device or resource busy" (it
  is a mount point), so ``> .agentd.toml``, ``mv x .agentd.toml``, ``git config`` and a
  new ``.git/hooks/pre-commit`` all fail;
* every capability dropped and ``no_new_privs`` set (bwrap's own), so even a daemon
  running as root cannot unmount them; ``--die-with-parent``.

bubblewrap needs either root or unprivileged user namespaces; :func:`available` probes it
once per daemon by running ``bwrap … true``. Where it is missing or cannot run, bash falls
back to Landlock (writes confined to the workspace, control files not protected) and the
session says so in a ``session_warning`` (:func:`unprotected_warning`).

Limits: a control file that does not exist when the command starts is not mounted over, so
the command could create one (a later session does not trust a project file it created: trust
is pinned to the file's content, see :mod:`agentd.protocol.trust_list`); control files in
subfolders of the workspace are protected from the file tools, not from bash.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from agentd.tools.files.protected import CONTROL_NAMES

PROBE_TIMEOUT = 10.0


@cache
def bwrap_path() -> str | None:
    """The ``bwrap`` executable on the daemon's PATH (looked up once)."""
    return shutil.which("bwrap")


@cache
def available() -> bool:
    """Whether bubblewrap runs here (installed, and allowed to create its namespaces): one
    probe run per daemon process."""
    program = bwrap_path()
    if program is None:
        return False
    try:
        ran = subprocess.run(
            [program, *_base_args(), "--", "/bin/true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return ran.returncode == 0


def _base_args() -> list[str]:
    return [
        "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc",
        "--unshare-net", "--cap-drop", "ALL", "--die-with-parent",
    ]  # fmt: skip


def control_paths(workspace: Path) -> list[Path]:
    """The control files and folders that exist directly in ``workspace`` (symlinks are
    left out: a bind would follow them, and a link cannot be written through a read-only
    target anyway; a ``.git`` link's target is protected by :mod:`.gitdirs`)."""
    found = []
    for name in sorted(CONTROL_NAMES):
        path = workspace / name
        if os.path.lexists(path) and not path.is_symlink():
            found.append(path)
    return found


def hidden_args(visible: list[Path]) -> list[str]:
    """``--tmpfs`` over each folder of the daemon's control channels
    (:func:`agentd.paths.control_paths`: its socket's and token file's folders, the runtime
    dir…), so a sandboxed command finds no socket or token there. A folder that is, holds or
    lies in one of the ``visible`` trees (the workspace, the temp dir) is not covered: each
    control file in it is masked with an empty file instead (``/dev/null`` bound over it), as
    are the daemon's log files (:func:`agentd.paths.masked_files`: a web sign-in link may be in
    them)."""
    from agentd.paths import control_paths as daemon_paths
    from agentd.paths import masked_files

    args: list[str] = []
    hidden: list[Path] = []
    for path in daemon_paths():
        real = Path(os.path.realpath(path))
        folder = real if _is_dir(real) else real.parent
        if not _reachable(folder) or any(folder.is_relative_to(done) for done in hidden):
            continue  # a folder this uid cannot enter is out of its commands' reach already
        if any(_overlaps(folder, tree) for tree in visible):
            if os.path.lexists(real) and not real.is_dir():
                args += ["--ro-bind", "/dev/null", str(real)]
            continue
        hidden.append(folder)
        args += ["--tmpfs", str(folder)]
    for file in masked_files():
        real = Path(os.path.realpath(file))
        if (
            _reachable(real.parent)
            and real.is_file()
            and not any(real.is_relative_to(done) for done in hidden)
        ):
            args += ["--ro-bind", "/dev/null", str(real)]
    return args


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a folder above it this uid may not enter
        return False


def _reachable(folder: Path) -> bool:
    """Whether ``folder`` is a folder this uid can enter (bubblewrap, running as the same
    uid, must be able to make its mount point there)."""
    return _is_dir(folder) and os.access(folder, os.X_OK)


def _overlaps(folder: Path, tree: Path) -> bool:
    return folder.is_relative_to(tree) or tree.is_relative_to(folder)


def wrapper(
    workspace: Path, writable: list[Path], *, network: bool = False, seccomp_fd: int | None = None
) -> list[str]:
    """The ``bwrap`` argv prefix (ending in ``--``) for a command confined to ``workspace``
    and ``writable``, with the workspace's control files and git dirs read-only, the
    daemon's control channels hidden (:func:`hidden_args`), its own process namespace and
    ``/proc``, no network of its own unless ``network`` (then the daemon's), and the seccomp
    program read from ``seccomp_fd`` (:mod:`agentd.tools.process.seccomp`). Call only when
    :func:`available`."""
    from agentd.tools.process.gitdirs import read_only_git

    program = bwrap_path()
    assert program is not None
    root = Path(os.path.realpath(workspace))
    trees = [Path(os.path.realpath(folder)) for folder in [root, *writable]]
    args = [program, *_base_args()]
    if network:
        args.remove("--unshare-net")
    args += hidden_args(trees)
    for real in trees:
        args += ["--bind", str(real), str(real)]
    for path in [*control_paths(root), *read_only_git(root)]:
        args += ["--ro-bind", str(path), str(path)]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return [*args, "--"]


def unprotected_warning() -> str | None:
    """The warning for a workspace sandbox where bubblewrap cannot run (None: it can)."""
    if available():
        return None
    return (
        "bash cannot keep the project's control files (.git, .agentd.toml, .agentd, "
        ".mcp.json) read-only: bubblewrap (`bwrap`) is not installed or cannot create a "
        "mount namespace here. Commands are confined to the workspace with Landlock where "
        "the kernel has it, but may change those files; install bubblewrap to protect them."
    )
