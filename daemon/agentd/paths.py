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

Imports only the standard library.
"""

from __future__ import annotations

import os
from pathlib import Path

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
    """Per-user directory for logs."""
    return _xdg("XDG_STATE_HOME", ".local/state")


def data_dir() -> Path:
    """Per-user directory for session files."""
    return _xdg("XDG_DATA_HOME", ".local/share")


def config_dir() -> Path:
    """Per-user directory for the configuration file."""
    return _xdg("XDG_CONFIG_HOME", ".config")


def default_socket_path() -> Path:
    """The shared daemon's Unix socket: ``runtime_dir() / "agentd.sock"``."""
    return runtime_dir() / "agentd.sock"


def default_token_file() -> Path:
    """The TCP token file: ``runtime_dir() / "tcp.token"``."""
    return runtime_dir() / "tcp.token"


def default_log_file() -> Path:
    """The shared daemon's log file: ``state_dir() / "agentd.log"``."""
    return state_dir() / "agentd.log"
