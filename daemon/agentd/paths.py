"""Where agentd keeps its files, following the XDG base-directory conventions.

Every function reads the environment when it is called (not at import), so tests and child
processes can point them elsewhere. Relative ``XDG_*`` values are ignored, as the spec asks.

=====================  ==============================================  ==========================
Function               Default                                         Fallback
=====================  ==============================================  ==========================
``runtime_dir()``      ``$XDG_RUNTIME_DIR/agentd``                     ``/tmp/agentd-$UID``
``state_dir()``        ``$XDG_STATE_HOME/agentd``                      ``~/.local/state/agentd``
``data_dir()``         ``$XDG_DATA_HOME/agentd``                       ``~/.local/share/agentd``
``config_dir()``       ``$XDG_CONFIG_HOME/agentd``                     ``~/.config/agentd``
=====================  ==============================================  ==========================

Imports only the standard library. :func:`check_socket_folder` and :func:`check_socket_peer` are
what every client checks before it talks to a daemon on a Unix socket (see "The shared
socket" in docs/security.md).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import socket

APP = "agentd"


def _xdg(variable: str, fallback: str) -> Path:
    value = os.environ.get(variable, "")
    if value and Path(value).is_absolute():
        return Path(value) / APP
    return Path.home() / fallback / APP


def runtime_dir() -> Path:
    """Per-user directory for the socket, lock, pid and TCP token files (not created here)."""
    value = os.environ.get("XDG_RUNTIME_DIR", "")
    if value and Path(value).is_absolute():
        return Path(value) / APP
    return Path("/tmp") / f"{APP}-{os.getuid()}"


def state_dir() -> Path:
    """Per-user directory for logs, process records, spill files and probe answers."""
    return _xdg("XDG_STATE_HOME", ".local/state")


def data_dir() -> Path:
    """Per-user directory for session files."""
    return _xdg("XDG_DATA_HOME", ".local/share")


def config_dir() -> Path:
    """Per-user directory for the configuration file."""
    return _xdg("XDG_CONFIG_HOME", ".config")


def credentials_dir() -> Path:
    """Per-user directory for stored credentials (MCP servers' OAuth tokens): ``data_dir() /
    "credentials"``, created 0700 by its writer and hidden from sandboxed commands."""
    return data_dir() / "credentials"


def default_socket_path() -> Path:
    """The shared daemon's Unix socket: ``runtime_dir() / "agentd.sock"``."""
    return runtime_dir() / "agentd.sock"


def default_token_file() -> Path:
    """The TCP token file: ``runtime_dir() / "tcp.token"``."""
    return runtime_dir() / "tcp.token"


def default_mcp_token_file() -> Path:
    """``agentd mcp --http``'s token file: ``runtime_dir() / "mcp.token"``."""
    return runtime_dir() / "mcp.token"


def default_log_file() -> Path:
    """The shared daemon's log file: ``state_dir() / "agentd.log"``."""
    return state_dir() / "agentd.log"


# --- the daemon's control channels, hidden from sandboxed commands ---------------------

_CONTROL: list[Path] = []


def add_control_path(path: str | os.PathLike[str]) -> None:
    """Record a file through which this process can be controlled (its socket, the TCP
    token file…), so that sandboxed commands do not see it (see :func:`control_paths`)."""
    real = Path(path).absolute()
    if real not in _CONTROL:
        _CONTROL.append(real)


_MASKED: list[Path] = []


def add_masked_file(path: str | os.PathLike[str]) -> None:
    """Record a file sandboxed commands must not read although its folder stays visible
    (this process's log file, which may hold a web sign-in link)."""
    real = Path(path).absolute()
    if real not in _MASKED:
        _MASKED.append(real)


def masked_files() -> list[Path]:
    """The files of :func:`add_masked_file`, and the shared daemon's default log file."""
    return list(dict.fromkeys([*_MASKED, default_log_file()]))


def control_paths() -> list[Path]:
    """Every control file this process recorded, then the folders that hold control files
    wherever a daemon of this user puts them: :func:`runtime_dir` (as this process's
    environment says), the ``/tmp/agentd-$UID`` fallback, and the web chat's redirect files
    (``state_dir() / "web"``, one-time sign-in links) and the stored credentials (a file of
    :func:`credentials_dir`, so the folder is covered once it exists, and the data dir that
    holds it is left alone before)."""
    fallback = Path("/tmp") / f"{APP}-{os.getuid()}"
    credentials = credentials_dir() / "mcp-oauth.json"
    folders = [runtime_dir(), fallback, state_dir() / "web", credentials]
    return [*_CONTROL, *dict.fromkeys(folders)]


def too_broad(folder: str | os.PathLike[str]) -> str | None:
    """Why ``folder`` covers far more than one project (None when it does not): the
    filesystem root, the home folder (or a folder above it), or a folder others can write
    to (mode o+w, like /tmp, where anyone can create files). Neither trusted (``agentctl
    trust``) nor used as a sandbox root."""
    real = Path(os.path.realpath(folder))
    home = Path(os.path.realpath(Path.home()))
    if real == Path("/"):
        return "it is the filesystem root"
    if real == home:
        return "it is your home folder"
    if real in home.parents:
        return f"it holds your home folder ({home})"
    try:
        mode = real.stat().st_mode
    except OSError:
        return None
    if mode & 0o002:
        return f"anyone can write to it (mode {mode & 0o7777:04o})"
    return None


# --- checking a daemon's socket before talking to it ----------------------------------------


class UnsafeSocketError(PermissionError):
    """The socket's folder or the process listening on it is not this user's: a client
    must refuse to talk (another local user may be impersonating the daemon). The message
    says what is wrong and what to do."""


def check_socket_folder(socket_path: str | os.PathLike[str]) -> None:
    """Refuse (:class:`UnsafeSocketError`) unless the socket's folder is owned by this user
    and nobody else can have put the socket there: the default folder (:func:`runtime_dir`)
    must be 0700, as the daemon makes it; another folder (``--socket``) must not be writable
    by group or others.

    A missing folder raises :class:`FileNotFoundError`, a file in its place
    :class:`NotADirectoryError` (nobody listens: a client may try to start the daemon).
    Done before connecting, so a squatted folder gets no connection at all.
    """
    folder = Path(socket_path).absolute().parent
    info = folder.stat()
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(folder))
    uid = os.getuid()
    if info.st_uid != uid:
        raise UnsafeSocketError(
            f"refusing to connect to {socket_path}: its folder {folder} belongs to uid "
            f"{info.st_uid}, not to you (uid {uid}); another user may be impersonating "
            f"agentd. Remove the folder (or use another --socket) and start agentd again"
        )
    default = folder == runtime_dir().absolute()
    if info.st_mode & (0o077 if default else 0o022):
        what = "open to other users" if default else "writable by other users"
        raise UnsafeSocketError(
            f"refusing to connect to {socket_path}: its folder {folder} is {what} (mode "
            f"{info.st_mode & 0o7777:04o}); run `chmod 700 {folder}` if you created it"
        )


def check_socket_peer(sock: socket.socket, socket_path: str | os.PathLike[str]) -> None:
    """Refuse (:class:`UnsafeSocketError`) unless the process at the other end of the
    connected Unix socket ``sock`` runs as this user (``SO_PEERCRED``). Call it right
    after connecting, before sending anything, and close the socket when it raises."""
    import socket
    import struct

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:  # not Linux: the folder check stands alone
        return
    raw = sock.getsockopt(socket.SOL_SOCKET, option, 12)
    pid, peer_uid, _gid = struct.unpack("3i", raw)
    uid = os.getuid()
    if peer_uid != uid:
        raise UnsafeSocketError(
            f"refusing to talk to {socket_path}: the process listening there (pid {pid}) "
            f"runs as uid {peer_uid}, not as you (uid {uid}); another user may be "
            f"impersonating agentd"
        )


# --- token files (the daemon's TCP, agentd mcp's HTTP) ---------------------------------------


class UnsafeTokenError(PermissionError):
    """A token file others may read, or one that holds no usable token; the message says
    what to do."""


def load_or_create_token(path: Path) -> str:
    """The token stored in ``path``; a new random one (file mode 0600, its folder created
    0700) if it does not exist. :class:`UnsafeTokenError` for a file that is not this user's
    alone or holds fewer than 16 characters."""
    import secrets

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_token(path)
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    return token


def _read_token(path: Path) -> str:
    info = path.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise UnsafeTokenError(f"token file {path} must be private: chmod 600 {path}")
    token = path.read_text().strip()
    if len(token) < 16:
        raise UnsafeTokenError(f"token file {path} holds no usable token (16+ characters)")
    return token


def which(name: str) -> str | None:
    """The executable ``name`` as found on ``PATH`` (by ``shutil.which``'s rules: the first
    entry holding an executable file of that name; a name with a slash is checked as it is),
    else None. Here so that the start-up path need not import ``shutil``, which brings
    ``bz2``, ``lzma`` and ``zlib`` along."""

    def runnable(candidate: Path) -> bool:
        return os.access(candidate, os.X_OK) and not candidate.is_dir()

    if "/" in name:
        return name if runnable(Path(name)) else None
    for folder in (os.environ.get("PATH") or os.defpath).split(os.pathsep):
        candidate = Path(folder, name)
        if runnable(candidate):
            return str(candidate)
    return None
