"""Listing sessions, newest first, backed by a cache file ``<root>/index.json``.

The index maps each session file (``<cwd-slug>/<name>``) to the stat it was summarised at
and the summary. Listing stats every file and orders them by mtime; a file of the returned
page whose mtime or size changed (or that is new) is summarised again (see
:mod:`agentd.store.scan`), records of vanished files are dropped, and the index is rewritten
when anything changed. The session files stay the
source of truth: a missing, corrupt or stale index only costs a rescan.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from agentd.errors import InvalidParams
from agentd.protocol.session_file import SessionSummary
from agentd.store.paths import SUFFIX, cwd_slug, iso_from_epoch
from agentd.store.reader import log_warning
from agentd.store.scan import FileSummary, summarize

INDEX_NAME = "index.json"
INDEX_VERSION = 2
MAX_LIMIT = 1000


class StoreIndex(msgspec.Struct, rename="camel"):
    """The content of ``index.json``: one :class:`FileSummary` per ``slug/name`` key."""

    version: int = INDEX_VERSION
    files: dict[str, FileSummary] = msgspec.field(default_factory=dict)


_INDEX_DECODER = msgspec.json.Decoder(StoreIndex)
_Listed = tuple[int, str, str, FileSummary]  # (mtime_ns, id from the file name, key, summary)


def list_sessions(
    root: Path, cwd: str | None = None, limit: int = 50, cursor: str | None = None
) -> tuple[list[SessionSummary], str | None]:
    """Sessions under ``root`` (only those of ``cwd`` when given), most recently updated
    first, at most ``limit``; plus the cursor of the next page (``None`` on the last page).

    Every file is only stat-ed; only the files of the returned page are summarised (and only
    when the index has no fresh record of them), so a listing costs one page of scans even
    without an index. ``cursor`` is an opaque value from a previous call. Raises
    :class:`InvalidParams` for a bad ``limit``, ``cursor`` or a relative ``cwd``.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidParams(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    after = _parse_cursor(cursor)
    folders = [cwd_slug(cwd)] if cwd is not None else _folders(root)
    candidates = sorted(_candidates(root, folders), key=lambda c: (-c[0], c[1]))
    index = _load_index(root)
    changed = _prune(index, {c[2] for c in candidates}, folders, prune_all=cwd is None)
    if after is not None:
        candidates = [c for c in candidates if (-c[0], c[1]) > (-after[0], after[1])]
    page: list[_Listed] = []
    for mtime_ns, file_id, key, stat in candidates:
        if len(page) > limit:
            break
        known = index.files.get(key)
        if known is None or (known.mtime_ns, known.size) != (stat.st_mtime_ns, stat.st_size):
            known = index.files[key] = summarize(root / key, stat, known)
            changed = True
        if known.session_id:
            page.append((mtime_ns, file_id, key, known))
    if changed:
        _save_index(root, index)
    next_cursor = f"{page[limit - 1][0]}:{page[limit - 1][1]}" if len(page) > limit else None
    return [_to_summary(root, item) for item in page[:limit]], next_cursor


def _candidates(root: Path, folders: list[str]) -> list[tuple[int, str, str, os.stat_result]]:
    """``(mtime_ns, id from the file name, slug/name key, stat)`` of every session file."""
    return [
        (stat.st_mtime_ns, name[: -len(SUFFIX)].rpartition("_")[2], f"{folder}/{name}", stat)
        for folder in folders
        for name, stat in _session_files(root / folder)
    ]


def _prune(index: StoreIndex, present: set[str], folders: list[str], *, prune_all: bool) -> bool:
    """Drop records of files that are gone (in the listed folders, or everywhere on a full
    listing); return whether any was dropped."""
    gone = [
        key
        for key in index.files
        if key not in present and (prune_all or key.partition("/")[0] in folders)
    ]
    for key in gone:
        del index.files[key]
    return bool(gone)


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
    mtime_ns, _file_id, key, summary = item
    return SessionSummary(
        session_id=summary.session_id,
        cwd=summary.cwd,
        created_at=summary.created_at,
        updated_at=iso_from_epoch(mtime_ns / 1e9),
        entry_count=summary.entry_count,
        path=str(root / key),
        title=summary.title,
        parent_session=summary.parent_session,
        parent_entry_id=summary.parent_entry_id,
        parent_session_id=summary.parent_session_id,
        parent_tool_call_id=summary.parent_tool_call_id,
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
    temporary = root / f".{INDEX_NAME}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(msgspec.json.encode(index))
        temporary.replace(root / INDEX_NAME)
    except OSError as exc:
        log_warning("session_index_not_saved", root=str(root), error=str(exc))
        temporary.unlink(missing_ok=True)
