"""Listing sessions, newest first, backed by a cache file ``<root>/index.json``.

The index maps each session file (``<cwd-slug>/<name>``) to the stat it was summarised at
and the summary. Listing stats every file; a file whose mtime or size changed (or that is
new) is summarised again (see :mod:`agentd.store.scan`), records of vanished files are
dropped, and the index is rewritten when anything changed. The session files stay the
source of truth: a missing, corrupt or stale index only costs a rescan.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import msgspec

from agentd.errors import InvalidParams
from agentd.protocol.session_file import SessionSummary
from agentd.store.paths import SUFFIX, cwd_slug, iso_from_epoch
from agentd.store.reader import log_warning
from agentd.store.scan import FileSummary, summarize

INDEX_NAME = "index.json"
INDEX_VERSION = 1
MAX_LIMIT = 1000


class StoreIndex(msgspec.Struct, rename="camel"):
    """The content of ``index.json``: one :class:`FileSummary` per ``slug/name`` key."""

    version: int = INDEX_VERSION
    files: dict[str, FileSummary] = msgspec.field(default_factory=dict)


_INDEX_DECODER = msgspec.json.Decoder(StoreIndex)
_Listed = tuple[int, str, str, FileSummary]  # (mtime_ns, session id, key, summary)


def list_sessions(
    root: Path, cwd: str | None = None, limit: int = 50, cursor: str | None = None
) -> tuple[list[SessionSummary], str | None]:
    """Sessions under ``root`` (only those of ``cwd`` when given), most recently updated
    first, at most ``limit``; plus the cursor of the next page (``None`` on the last page).

    ``cursor`` is an opaque value from a previous call. Raises :class:`InvalidParams` for a
    bad ``limit``, ``cursor`` or a relative ``cwd``.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidParams(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    after = _parse_cursor(cursor)
    folders = [cwd_slug(cwd)] if cwd is not None else _folders(root)
    listed = refresh_index(root, folders, prune_all=cwd is None)
    listed.sort(key=lambda item: (-item[0], item[1]))
    if after is not None:
        listed = [item for item in listed if (-item[0], item[1]) > (-after[0], after[1])]
    page = listed[:limit]
    next_cursor = f"{page[-1][0]}:{page[-1][1]}" if len(listed) > limit else None
    return [_to_summary(root, item) for item in page], next_cursor


def refresh_index(root: Path, folders: list[str], *, prune_all: bool) -> list[_Listed]:
    """Bring the index up to date for ``folders`` and return their readable sessions.

    ``prune_all``: also drop records of folders that were not listed (a full listing).
    """
    index = _load_index(root)
    fresh: dict[str, FileSummary] = {}
    changed = False
    for folder in folders:
        for name, stat in _session_files(root / folder):
            key = f"{folder}/{name}"
            known = index.files.get(key)
            if known is None or (known.mtime_ns, known.size) != (stat.st_mtime_ns, stat.st_size):
                known = summarize(root / folder / name, stat, known)
                changed = True
            fresh[key] = known
    for key in list(index.files):
        listed_here = key.partition("/")[0] in folders
        if key not in fresh and (prune_all or listed_here):
            del index.files[key]
            changed = True
    index.files.update(fresh)
    if changed:
        _save_index(root, index)
    return [
        (summary.mtime_ns, summary.session_id, key, summary)
        for key, summary in fresh.items()
        if summary.session_id
    ]


def _parse_cursor(cursor: str | None) -> tuple[int, str] | None:
    if cursor is None:
        return None
    mtime, sep, session_id = cursor.partition(":")
    if not sep or not mtime.isdigit() or not session_id:
        raise InvalidParams(f"invalid cursor {cursor!r}: pass a nextCursor from a listing")
    return int(mtime), session_id


def _folders(root: Path) -> list[str]:
    try:
        with os.scandir(root) as entries:
            return [entry.name for entry in entries if entry.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []


def _session_files(folder: Path) -> list[tuple[str, os.stat_result]]:
    """``(name, stat)`` of the session files in ``folder``; files that vanish meanwhile are
    left out."""
    found = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(SUFFIX) and entry.is_file(follow_symlinks=False):
                    try:
                        found.append((entry.name, entry.stat()))
                    except FileNotFoundError:
                        continue
    except (FileNotFoundError, NotADirectoryError):
        return []
    return found


def _to_summary(root: Path, item: _Listed) -> SessionSummary:
    mtime_ns, session_id, key, summary = item
    return SessionSummary(
        session_id=session_id,
        cwd=summary.cwd,
        created_at=summary.created_at,
        updated_at=iso_from_epoch(mtime_ns / 1e9),
        entry_count=summary.entry_count,
        path=str(root / key),
        title=summary.title,
        parent_session=summary.parent_session,
    )


def _load_index(root: Path) -> StoreIndex:
    try:
        index = _INDEX_DECODER.decode((root / INDEX_NAME).read_bytes())
    except FileNotFoundError:
        return StoreIndex()
    except (OSError, msgspec.DecodeError) as exc:
        log_warning("session_index_unreadable", root=str(root), error=str(exc))
        return StoreIndex()
    return index if index.version == INDEX_VERSION else StoreIndex()


def _save_index(root: Path, index: StoreIndex) -> None:
    """Replace the index atomically (no fsync: it is a cache). Failures are only logged."""
    temporary = root / f".{INDEX_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(msgspec.json.encode(index))
        temporary.replace(root / INDEX_NAME)
    except OSError as exc:
        log_warning("session_index_not_saved", root=str(root), error=str(exc))
        temporary.unlink(missing_ok=True)
