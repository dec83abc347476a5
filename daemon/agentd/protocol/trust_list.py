"""The list of folders whose project configuration the user trusts.

It is a file the daemon reads and ``agentctl trust`` writes, so its format lives here, beside
the other shared formats: ``$XDG_CONFIG_HOME/agentd/trusted.json`` (default
``~/.config/agentd/trusted.json``), mode 0600::

    {"trusted": ["/real/absolute/path", …],
     "pins": {"/real/absolute/path/.agentd.toml": "sha256:…",
              "/real/absolute/path/.agentd/commands": "sha256:…", …}}

A folder is trusted when it or one of its parents is listed. Trust is pinned to content, as
direnv's ``allow`` is: trusting a folder records the pin of each of its control paths that
exists (``.agentd.toml``, ``.mcp.json``, ``.agentd/hooks/``, ``commands/``, ``agents/``,
``skills/``: :mod:`agentd.protocol.control_pins`), and a control path is trusted only while
it is in a trusted folder *and* its content matches its pin (:func:`control_trust`): one that
changed since, or appeared since (in the folder or a subfolder), is ``"changed"`` until the
user trusts its folder again. An unreadable or malformed list trusts nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

from agentd.protocol.control_pins import (
    Snapshot,
    content_pin,
    control_paths,
    owner_of,
    read_control,
)

TRUST_FILE = "trusted.json"
PROJECT_FILE = ".agentd.toml"
FileTrust = Literal["trusted", "untrusted", "changed"]


class TrustList(msgspec.Struct, omit_defaults=True):
    """The file's content: real absolute paths of trusted folders, and the content pin
    (``sha256:HEX``) of each control path trusted with them, by its real path."""

    trusted: list[str] = msgspec.field(default_factory=list)
    pins: dict[str, str] = msgspec.field(default_factory=dict)


def _read_list(env: Mapping[str, str]) -> TrustList:
    try:
        return msgspec.json.decode(trust_list_path(env).read_bytes(), type=TrustList)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return TrustList()


def config_dir(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/agentd`` (default ``~/.config/agentd``)."""
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "agentd"


def trust_list_path(env: Mapping[str, str]) -> Path:
    """Where the trust list is kept."""
    return config_dir(env) / TRUST_FILE


def read_trusted(env: Mapping[str, str]) -> list[Path]:
    """The trusted folders (empty when the file is missing, unreadable or malformed)."""
    return [Path(item) for item in _read_list(env).trusted if item.startswith("/")]


def is_trusted(directory: Path, env: Mapping[str, str]) -> bool:
    """Whether the real path of ``directory`` or one of its parents is listed."""
    real = Path(os.path.realpath(directory))
    return any(real == entry or real.is_relative_to(entry) for entry in read_trusted(env))


def file_trust(path: Path, data: bytes, env: Mapping[str, str]) -> FileTrust:
    """Whether the project file ``path``, read as ``data``, is trusted (see
    :func:`control_trust`)."""
    return control_trust(path, content_pin(data), env)


def control_trust(path: Path, pin: str | None, env: Mapping[str, str]) -> FileTrust:
    """Whether the control path ``path``, whose content has the pin ``pin``, is trusted:
    ``"untrusted"`` when no listed folder holds it, ``"changed"`` when one does but ``pin``
    is not the one recorded when it was trusted (or none was, or ``pin`` is None),
    ``"trusted"`` otherwise."""
    owner, key = _pin_key(path)
    listed = _read_list(env)
    if not any(_within(owner, entry) for entry in listed.trusted):
        return "untrusted"
    return "trusted" if pin is not None and listed.pins.get(key) == pin else "changed"


def _pin_key(path: Path) -> tuple[str, str]:
    """The real path of the folder whose control path ``path`` is, and the key of its pin:
    that folder's real path joined with the control path's own name (a control path that
    is a symlink is pinned by its content, under its own name, never by its target's)."""
    owner = owner_of(path)
    real = os.path.realpath(owner)
    return real, f"{real.rstrip('/')}/{os.path.relpath(path, owner)}"


def _within(path: str, folder: str) -> bool:
    """Whether the real path ``path`` is ``folder`` or below it (string checks: a session
    start makes several, and pathlib's cost ~0.1 ms each with a long list)."""
    return folder.startswith("/") and (path == folder or path.startswith(folder.rstrip("/") + "/"))


def pinned_paths(directory: Path, env: Mapping[str, str]) -> dict[str, str]:
    """The pins recorded for the control paths of ``directory`` (real path), by path."""
    real = Path(os.path.realpath(directory))
    return {name: pin for name, pin in _read_list(env).pins.items() if owner_of(Path(name)) == real}


def add_trusted(
    directory: Path, env: Mapping[str, str], snapshots: list[Snapshot | None] | None = None
) -> Path:
    """List ``directory`` (its real path, which is returned) and pin its control paths as
    they are now, or as ``snapshots`` (read with :func:`read_control`, e.g. when the user was
    shown them) say; a control path that does not exist, or cannot be pinned, gets no pin
    (one that appears later is not trusted)."""
    real = Path(os.path.realpath(directory))
    listed = _read_list(env)
    entries = [item for item in listed.trusted if item.startswith("/")]
    if str(real) not in entries:
        entries.append(str(real))
    pins = dict(listed.pins)
    given = {_pin_key(s.path)[1]: s for s in snapshots or () if s is not None}
    for path, _kind, _about in control_paths(real):
        snapshot = given.get(str(path)) if snapshots is not None else read_control(path)
        if snapshot is not None and snapshot.pin is not None:
            pins[str(path)] = snapshot.pin
        else:
            pins.pop(str(path), None)
    _write(TrustList(entries, pins), env)
    return real


def remove_trusted(directory: Path, env: Mapping[str, str]) -> bool:
    """Unlist ``directory`` (and forget the pins of the files in it); False when it was not
    listed."""
    real = Path(os.path.realpath(directory))
    listed = _read_list(env)
    if str(real) not in listed.trusted:
        return False
    entries = [entry for entry in listed.trusted if entry != str(real)]
    pins = {name: pin for name, pin in listed.pins.items() if owner_of(Path(name)) != real}
    _write(TrustList(entries, pins), env)
    return True


def _write(content: TrustList, env: Mapping[str, str]) -> None:
    """Replace the file atomically (directory 0700, file 0600)."""
    folder = config_dir(env)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    import tempfile  # with shutil, bz2 and lzma: only when the list is written

    handle, temp = tempfile.mkstemp(dir=folder, prefix=".trusted-", suffix=".json")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(msgspec.json.format(msgspec.json.encode(content)) + b"\n")
        Path(temp).replace(folder / TRUST_FILE)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
