"""The list of folders whose project configuration the user trusts.

It is a file the daemon reads and ``agentctl trust`` writes, so its format lives here, beside
the other shared formats: ``$XDG_CONFIG_HOME/agentd/trusted.json`` (default
``~/.config/agentd/trusted.json``), ``{"trusted": ["/real/absolute/path", …]}``, mode 0600.
A folder is trusted when it or one of its parents is listed. An unreadable or malformed file
trusts nothing.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import msgspec

TRUST_FILE = "trusted.json"


class TrustList(msgspec.Struct):
    """The file's content: real absolute paths of trusted folders."""

    trusted: list[str] = msgspec.field(default_factory=list)


def config_dir(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/agentd`` (default ``~/.config/agentd``)."""
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "agentd"


def trust_list_path(env: Mapping[str, str]) -> Path:
    """Where the trust list is kept."""
    return config_dir(env) / TRUST_FILE


def read_trusted(env: Mapping[str, str]) -> list[Path]:
    """The trusted folders (empty when the file is missing, unreadable or malformed)."""
    try:
        data = msgspec.json.decode(trust_list_path(env).read_bytes(), type=TrustList)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return []
    return [Path(item) for item in data.trusted if item.startswith("/")]


def is_trusted(directory: Path, env: Mapping[str, str]) -> bool:
    """Whether the real path of ``directory`` or one of its parents is listed."""
    real = Path(os.path.realpath(directory))
    return any(real == entry or real.is_relative_to(entry) for entry in read_trusted(env))


def add_trusted(directory: Path, env: Mapping[str, str]) -> Path:
    """List ``directory`` (its real path, which is returned)."""
    real = Path(os.path.realpath(directory))
    entries = [str(path) for path in read_trusted(env)]
    if str(real) not in entries:
        _write([*entries, str(real)], env)
    return real


def remove_trusted(directory: Path, env: Mapping[str, str]) -> bool:
    """Unlist ``directory``; False when it was not listed."""
    real = str(Path(os.path.realpath(directory)))
    entries = [str(path) for path in read_trusted(env)]
    if real not in entries:
        return False
    _write([entry for entry in entries if entry != real], env)
    return True


def _write(entries: list[str], env: Mapping[str, str]) -> None:
    """Replace the file atomically (directory 0700, file 0600)."""
    folder = config_dir(env)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temp = tempfile.mkstemp(dir=folder, prefix=".trusted-", suffix=".json")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(msgspec.json.format(msgspec.json.encode(TrustList(entries))) + b"\n")
        Path(temp).replace(folder / TRUST_FILE)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
