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
    return ["--ro-bind", "/", "/", "--dev", "/dev", "--cap-drop", "ALL", "--die-with-parent"]


def control_paths(workspace: Path) -> list[Path]:
    """The control files and folders that exist directly in ``workspace`` (symlinks are
    left out: a bind would follow them, and a link cannot be written through a read-only
    target anyway)."""
    found = []
    for name in sorted(CONTROL_NAMES):
        path = workspace / name
        if os.path.lexists(path) and not path.is_symlink():
            found.append(path)
    return found


def wrapper(workspace: Path, writable: list[Path]) -> list[str]:
    """The ``bwrap`` argv prefix (ending in ``--``) for a command confined to ``workspace``
    and ``writable`` with the workspace's control files read-only. Call only when
    :func:`available`."""
    program = bwrap_path()
    assert program is not None
    root = Path(os.path.realpath(workspace))
    args = [program, *_base_args()]
    for folder in [root, *writable]:
        real = os.path.realpath(folder)
        args += ["--bind", real, real]
    for path in control_paths(root):
        args += ["--ro-bind", str(path), str(path)]
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
