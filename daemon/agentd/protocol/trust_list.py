"""The list of folders whose project configuration the user trusts.

It is a file the daemon reads and ``agentctl trust`` writes, so its format lives here, beside
the other shared formats: ``$XDG_CONFIG_HOME/agentd/trusted.json`` (default
``~/.config/agentd/trusted.json``), mode 0600::

    {"trusted": ["/real/absolute/path", …],
     "pins": {"/real/absolute/path/.agentd.toml": "sha256:…", …}}

A folder is trusted when it or one of its parents is listed. Trust is pinned to content, as
direnv's ``allow`` is: trusting a folder records the SHA-256 of its ``.agentd.toml`` (when it
has one), and a project file is trusted only while it is in a trusted folder *and* its bytes
hash to its pin (:func:`file_trust`): a file that changed since, or appeared since (in the
folder or a subfolder), is ``"changed"`` until the user trusts its folder again. An
unreadable or malformed file trusts nothing.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

TRUST_FILE = "trusted.json"
PROJECT_FILE = ".agentd.toml"
FileTrust = Literal["trusted", "untrusted", "changed"]


class TrustList(msgspec.Struct, omit_defaults=True):
    """The file's content: real absolute paths of trusted folders, and the content hash
    (``sha256:HEX``) of each project file trusted with them, by its real path."""

    trusted: list[str] = msgspec.field(default_factory=list)
    pins: dict[str, str] = msgspec.field(default_factory=dict)


def content_pin(data: bytes) -> str:
    """The pin of a file's content: ``sha256:`` and the hex digest."""
    import hashlib  # only when a project file is checked or trusted

    return "sha256:" + hashlib.sha256(data).hexdigest()


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
    """Whether the project file ``path``, read as ``data``, is trusted: ``"untrusted"`` when
    no listed folder holds it, ``"changed"`` when one does but ``data`` does not match the
    pin recorded when it was trusted (or none was), ``"trusted"`` otherwise."""
    real = Path(os.path.realpath(path))
    listed = _read_list(env)
    folders = [Path(item) for item in listed.trusted if item.startswith("/")]
    if not any(real.parent == entry or real.parent.is_relative_to(entry) for entry in folders):
        return "untrusted"
    return "trusted" if listed.pins.get(str(real)) == content_pin(data) else "changed"


def add_trusted(directory: Path, env: Mapping[str, str]) -> Path:
    """List ``directory`` (its real path, which is returned) and pin the content of its
    ``.agentd.toml`` as it is now (a file that appears later is not trusted)."""
    real = Path(os.path.realpath(directory))
    listed = _read_list(env)
    entries = [item for item in listed.trusted if item.startswith("/")]
    if str(real) not in entries:
        entries.append(str(real))
    pins = dict(listed.pins)
    project = real / PROJECT_FILE
    try:
        pins[str(project)] = content_pin(project.read_bytes())
    except OSError:
        pins.pop(str(project), None)
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
    pins = {name: pin for name, pin in listed.pins.items() if Path(name).parent != real}
    _write(TrustList(entries, pins), env)
    return True


def _write(content: TrustList, env: Mapping[str, str]) -> None:
    """Replace the file atomically (directory 0700, file 0600)."""
    folder = config_dir(env)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temp = tempfile.mkstemp(dir=folder, prefix=".trusted-", suffix=".json")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(msgspec.json.format(msgspec.json.encode(content)) + b"\n")
        Path(temp).replace(folder / TRUST_FILE)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
