"""Finding and starting the shared daemon.

The socket path is, in order: the ``--socket`` flag, ``$AGENTD_SOCKET``, then
``agentd.paths.default_socket_path()`` (``$XDG_RUNTIME_DIR/agentd/agentd.sock`` or a per-user
temp directory). A daemon started here runs ``agentd serve --socket PATH`` in its own session
(``setsid``: Ctrl-C in the client's terminal does not reach it), with stdin on /dev/null and
stdout/stderr appended to the daemon log file. Imports only the standard library.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SOCKET_ENV = "AGENTD_SOCKET"


def daemon_argv(*args: str) -> list[str]:
    """The command line that runs ``agentd`` with ``args``, in this Python environment.

    ``-P`` keeps the working directory off ``sys.path``: a project folder that happens to
    contain an ``agentd`` directory must not shadow the installed package.
    """
    return [sys.executable, "-P", "-m", "agentd", *args]


def socket_path(explicit: str | None = None) -> str:
    """The Unix socket of the shared daemon (see the module docstring)."""
    if explicit:
        return explicit
    from_env = os.environ.get(SOCKET_ENV)
    if from_env:
        return from_env
    from agentd.paths import default_socket_path

    return str(default_socket_path())


def log_file() -> Path:
    """Where the shared daemon writes its log (and where its stray output goes)."""
    from agentd.paths import default_log_file

    return Path(default_log_file())


def private_log() -> str | None:
    """Where a private ``--stdio`` daemon logs: the shared log file, when its directory can
    be created (else None: nowhere)."""
    path = log_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return None
    return str(path)


def spawn_detached(argv: list[str], log_path: Path, env: dict[str, str] | None = None) -> int:
    """Start ``argv`` in a new session with output appended to ``log_path``; return its pid.

    The child is not waited for here: call :func:`reap` to collect it if it exits while this
    process still runs.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, log_fd, 1),
            (os.POSIX_SPAWN_DUP2, log_fd, 2),
        ]
        return os.posix_spawn(
            argv[0], argv, os.environ if env is None else env, file_actions=actions, setsid=True
        )
    finally:
        os.close(log_fd)


def reap(pid: int) -> int | None:
    """The exit status of child ``pid`` if it has ended (collecting it), else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return None
    if done == 0:
        return None
    return os.waitstatus_to_exitcode(status)


LOG_TAIL_BYTES = 64 * 1024
"""How much of the end of the log the tail is taken from."""


def log_tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of ``path`` (empty when it does not exist)."""
    try:
        data = path.read_bytes()[-LOG_TAIL_BYTES:]
    except OSError:
        return ""
    return last_lines(data, lines)


def last_lines(data: bytes, lines: int) -> str:
    """The last ``lines`` lines of ``data`` (UTF-8, errors replaced), without surrounding space."""
    return "\n".join(data.decode("utf-8", "replace").split("\n")[-lines - 1 :]).strip()
