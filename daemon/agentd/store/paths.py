"""Where session files live: the store root, per-cwd folders, file names and id rules.

Layout: ``<root>/<cwd-slug>/<created>_<session-id>.jsonl`` where ``created`` is the UTC
creation time with ``:`` and ``.`` replaced by ``-`` (``2026-01-02T03-04-05-678Z``), so
file names sort by creation time and never contain ``_`` before the id.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Container, Iterator
from datetime import UTC, datetime
from pathlib import Path

from agentd.errors import InvalidParams
from agentd.store.contents import digest_of

SESSION_ID_RE = re.compile(r"[A-Za-z0-9._-]{1,128}")
"""Caller-chosen session ids: letters, digits, ``.``, ``_``, ``-``; 1 to 128 characters."""

SUFFIX = ".jsonl"
_PLAIN_PATH = re.compile(r"[A-Za-z0-9._/]*")
_SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9._]+")
_SLUG_MAX = 80


def default_root() -> Path:
    """The default store root: ``$XDG_DATA_HOME/agentd/sessions``, else
    ``~/.local/share/agentd/sessions``. The environment is read at each call."""
    data_home = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data_home) if Path(data_home).is_absolute() else Path.home() / ".local" / "share"
    return base / "agentd" / "sessions"


def cwd_slug(cwd: str) -> str:
    """A readable, filesystem-safe folder name for the absolute path ``cwd``.

    ``/home/me/proj`` becomes ``--home-me-proj--``. Paths with other characters than
    letters, digits, ``.``, ``_`` and ``/`` (or very long ones) get a readable, lossy form
    plus a hash of the exact path (``--home-me-my-proj--3fa2b1c8d0``), so two different
    paths never share a folder. Raises :class:`InvalidParams` for a relative path.
    """
    if not cwd.startswith("/"):
        raise InvalidParams(f"cwd must be an absolute path, got {cwd!r}")
    normal = posixpath.normpath(cwd).lstrip("/")
    readable = _SLUG_UNSAFE.sub("-", normal.replace("/", "-"))
    if _PLAIN_PATH.fullmatch(normal) and len(readable) <= _SLUG_MAX:
        return f"--{readable}--"
    digest = digest_of(normal.encode("utf-8", "surrogatepass"))[:10]
    return f"--{readable[-_SLUG_MAX:]}--{digest}"


def check_session_id(session_id: str) -> None:
    """Raise :class:`InvalidParams` unless ``session_id`` matches :data:`SESSION_ID_RE`."""
    if not SESSION_ID_RE.fullmatch(session_id) or session_id in {".", ".."}:
        raise InvalidParams(
            f"invalid session id {session_id!r}: use 1-128 letters, digits, '.', '_' or '-'"
        )


def session_file_name(created_at: str, session_id: str) -> str:
    """The file name of a session created at ``created_at`` (an ISO timestamp)."""
    stamp = created_at.replace(":", "-").replace(".", "-")
    return f"{stamp}_{session_id}{SUFFIX}"


def session_id_of(file_name: str) -> str | None:
    """The session id encoded in a session file name, or ``None`` if it is not one."""
    if not file_name.endswith(SUFFIX):
        return None
    _stamp, sep, rest = file_name.partition("_")
    return rest[: -len(SUFFIX)] if sep and len(rest) > len(SUFFIX) else None


def find_session(root: Path, session_id: str) -> Path | None:
    """The file of session ``session_id`` anywhere under ``root``, or ``None``.

    Scans the per-cwd folders' listings only (no file is opened). Unsafe ids find nothing.
    """
    return next(iter_session_files(root, session_id), None)


def iter_session_files(root: Path, session_id: str) -> Iterator[Path]:
    """Every file named for session ``session_id`` under ``root`` (normally at most one)."""
    if not SESSION_ID_RE.fullmatch(session_id):
        return
    wanted = f"_{session_id}{SUFFIX}"
    try:
        folders = [entry.path for entry in os.scandir(root) if entry.is_dir()]
    except FileNotFoundError:
        return
    for folder in folders:
        try:
            with os.scandir(folder) as names:
                found = [
                    Path(entry.path)
                    for entry in names
                    if entry.name.endswith(wanted) and session_id_of(entry.name) == session_id
                ]
        except FileNotFoundError:
            continue
        yield from found


def new_entry_id(taken: Container[str]) -> str:
    """A short random entry id (8 hex digits) that is not in ``taken``."""
    while True:
        entry_id = os.urandom(4).hex()
        if entry_id not in taken:
            return entry_id


def utc_now() -> str:
    """The current time as an ISO 8601 UTC string with milliseconds and a ``Z`` suffix."""
    return iso_from_epoch(datetime.now(UTC).timestamp())


def iso_from_epoch(seconds: float) -> str:
    """``seconds`` since the epoch as an ISO 8601 UTC string (milliseconds, ``Z``)."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.isoformat(timespec="milliseconds").removesuffix("+00:00") + "Z"


def epoch_from_iso(stamp: str) -> float:
    """Seconds since the epoch of an ISO 8601 timestamp (``0.0`` if it cannot be read)."""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return 0.0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
