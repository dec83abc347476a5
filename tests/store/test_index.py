"""list_sessions: newest first, cursor paging, titles and counts without parsing whole
files, and an index cache that follows the files (stale, corrupt or missing)."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from agentd.errors import InvalidParams
from agentd.protocol.session_file import CustomEntry, SessionInfoEntry
from agentd.store import SessionFile, list_sessions
from agentd.store.index import INDEX_NAME, INDEX_VERSION
from agentd.store.scan import BLOCK_SIZE
from tests.store.conftest import CWD, assistant, user

_BASE_NS = 1_700_000_000 * 10**9


def _make(root: Path, session_id: str, *, age: int, cwd: str = CWD, title: str | None = None):
    """A session with one exchange whose mtime is ``age`` seconds before a fixed time."""
    with SessionFile.create(root, cwd=cwd, session_id=session_id) as session:
        if title:
            session.append(SessionInfoEntry(title=title))
        session.append_message(user(f"hello from {session_id}"))
        session.append_message(assistant("hi"))
    _touch(session.path, age)
    return session


def _touch(path: Path, age: int) -> None:
    stamp = _BASE_NS - age * 10**9
    os.utime(path, ns=(stamp, stamp))


def _ids(items) -> list[str]:
    return [item.session_id for item in items]


def test_sessions_are_listed_newest_first_with_their_summary(root: Path) -> None:
    """Order follows the file's mtime; every field comes from the header, a count and a
    title search."""
    _make(root, "old", age=300)
    newest = _make(root, "new", age=10, title="Fix the parser")
    _make(root, "mid", age=100)
    items, cursor = list_sessions(root)
    assert _ids(items) == ["new", "mid", "old"]
    assert cursor is None
    first = items[0]
    assert first.title == "Fix the parser"
    assert first.cwd == CWD
    assert first.entry_count == 3
    assert first.path == str(newest.path)
    assert first.created_at == newest.header.created_at
    assert first.updated_at == "2023-11-14T22:13:10.000Z"
    assert items[1].title == "hello from mid"


def test_cursor_pages_through_everything_once(root: Path) -> None:
    """Pages of two, in order, without repeats, ending with a None cursor."""
    for n in range(5):
        _make(root, f"s{n}", age=n * 10)
    seen, cursor, pages = [], None, 0
    while True:
        items, cursor = list_sessions(root, limit=2, cursor=cursor)
        seen += _ids(items)
        pages += 1
        if cursor is None:
            break
    assert seen == ["s0", "s1", "s2", "s3", "s4"]
    assert pages == 3


def test_equal_mtimes_are_ordered_by_id_and_paged_stably(root: Path) -> None:
    """Ties are broken by session id, so a cursor never skips or repeats one."""
    for name in ["b", "a", "c"]:
        _make(root, name, age=5)
    first, cursor = list_sessions(root, limit=2)
    second, end = list_sessions(root, limit=2, cursor=cursor)
    assert _ids(first) + _ids(second) == ["a", "b", "c"]
    assert end is None


def test_cwd_filter(root: Path) -> None:
    """Only the sessions of that directory are listed."""
    _make(root, "here", age=1)
    _make(root, "there", age=2, cwd="/srv/other-dir")
    assert _ids(list_sessions(root, "/srv/other-dir")[0]) == ["there"]
    assert _ids(list_sessions(root, CWD)[0]) == ["here"]
    assert list_sessions(root, "/nowhere")[0] == []
    assert _ids(list_sessions(root)[0]) == ["here", "there"]


def test_bad_arguments_are_invalid_params(root: Path) -> None:
    """Limits out of range, forged cursors and relative directories are refused."""
    for kwargs in [{"limit": 0}, {"limit": 5000}, {"cursor": "garbage"}, {"cwd": "rel/dir"}]:
        with pytest.raises(InvalidParams):
            list_sessions(root, **kwargs)  # type: ignore[arg-type]


def test_empty_or_missing_root(root: Path) -> None:
    """No store yet means no sessions, not an error."""
    assert list_sessions(root) == ([], None)


def test_title_is_found_far_from_the_tail_and_follows_renames(root: Path) -> None:
    """A title set before megabytes of conversation is still found; the latest wins; a
    cleared title falls back to the first user message (shortened)."""
    with SessionFile.create(root, cwd=CWD, session_id="big") as session:
        session.append_message(user("  a very long first prompt " + "word " * 40))
        session.append(SessionInfoEntry(title="Early title"))
        for n in range(3):
            session.append_message(assistant("y" * BLOCK_SIZE, message_id=f"big{n}"))
    assert list_sessions(root)[0][0].title == "Early title"
    with SessionFile.open(session.path) as session:
        session.append(SessionInfoEntry(title="Renamed"))
    assert list_sessions(root)[0][0].title == "Renamed"
    with SessionFile.open(session.path) as session:
        session.append(SessionInfoEntry(title=None))
    title = list_sessions(root)[0][0].title
    assert title is not None
    assert title.startswith("a very long first prompt word word")
    assert title.endswith("…")
    assert len(title) == 80


@pytest.mark.parametrize("unit", ["line of a piped log\n", 'é "quoted" ünïcode\t'])
def test_a_first_prompt_longer_than_the_head_still_titles_the_session(
    root: Path, unit: str
) -> None:
    """A 5 MB first prompt (a paste, a file piped on stdin): its line does not end within the
    head read for titles; the title is still its beginning (escapes and UTF-8 cut cleanly)."""
    text = unit * (5_000_000 // len(unit))
    with SessionFile.create(root, cwd=CWD, session_id="piped") as session:
        session.append_message(user(text))
        session.append_message(assistant("ok"))
    title = list_sessions(root)[0][0].title
    assert title is not None
    assert title.endswith("…")
    assert len(title) == 80
    assert title[:-1].rstrip() == " ".join(text.split())[:79].rstrip()


def test_a_session_without_messages_has_no_title(root: Path) -> None:
    """Only a header (and non-message entries): title None, zero or more entries."""
    SessionFile.create(root, cwd=CWD, session_id="bare").close()
    with SessionFile.create(root, cwd=CWD, session_id="custom") as session:
        session.append(CustomEntry(custom_type="ui", data=1))
    items = {item.session_id: item for item in list_sessions(root)[0]}
    assert (items["bare"].title, items["bare"].entry_count) == (None, 0)
    assert (items["custom"].title, items["custom"].entry_count) == (None, 1)


def test_index_is_written_and_reused_then_updated_when_a_file_grows(root: Path) -> None:
    """The second listing uses the index; appends are picked up by stat (incrementally)
    and give the same result as a scan from scratch."""
    session = _make(root, "grow", age=50)
    assert list_sessions(root)[0][0].entry_count == 2
    assert (root / INDEX_NAME).is_file()
    with SessionFile.open(session.path) as reopened:
        reopened.append(SessionInfoEntry(title="Now titled"))
        reopened.append_message(user("more"))
    _touch(session.path, 40)
    updated = list_sessions(root)[0][0]
    assert (updated.entry_count, updated.title) == (4, "Now titled")
    (root / INDEX_NAME).unlink()
    assert list_sessions(root)[0][0] == updated


def test_stale_index_records_are_rebuilt_and_vanished_files_dropped(root: Path) -> None:
    """A file replaced behind the index's back (same name, other content) is rescanned;
    a deleted file disappears from the listing and the index."""
    keep = _make(root, "keep", age=10)
    gone = _make(root, "gone", age=20)
    list_sessions(root)
    gone.path.unlink()
    keep.path.write_bytes(keep.path.read_bytes().split(b"\n", 1)[0] + b"\n")
    _touch(keep.path, 5)
    items, _ = list_sessions(root)
    assert _ids(items) == ["keep"]
    assert (items[0].entry_count, items[0].title) == (0, None)
    index = msgspec.json.decode((root / INDEX_NAME).read_bytes())
    assert list(index["files"]) == [str(keep.path.relative_to(root))]


def test_corrupt_index_is_ignored_and_replaced(root: Path) -> None:
    """A damaged cache costs a rescan, never a failure."""
    _make(root, "one", age=1)
    root.joinpath(INDEX_NAME).write_text("{not json")
    assert _ids(list_sessions(root)[0]) == ["one"]
    assert msgspec.json.decode((root / INDEX_NAME).read_bytes())["version"] == INDEX_VERSION


def test_non_session_files_are_skipped(root: Path) -> None:
    """Stray .jsonl files without a session header are not listed."""
    _make(root, "real", age=1)
    stray = root / "--stray--"
    stray.mkdir()
    (stray / "2024-01-01T00-00-00-000Z_fake.jsonl").write_text('{"hello": 1}\n')
    (stray / "notes.txt").write_text("x")
    assert _ids(list_sessions(root)[0]) == ["real"]


def test_forks_show_their_parent(root: Path) -> None:
    """parentSession comes from the header."""
    source = _make(root, "src", age=10)
    SessionFile.open(source.path).fork(root, session_id="kid").close()
    items = {item.session_id: item for item in list_sessions(root)[0]}
    assert items["kid"].parent_session == "src"
    assert items["kid"].parent_entry_id == SessionFile.open(source.path).leaf_id
    assert items["kid"].entry_count == 2
    assert items["src"].parent_session is None


def test_only_the_returned_page_is_summarised(root: Path) -> None:
    """Without an index, a page of 2 reads just those files (plus one to know a next page
    exists); older sessions are summarised when a later page reaches them."""
    for age in range(6):
        _make(root, f"s{age}", age=age)
    items, cursor = list_sessions(root, limit=2)
    assert _ids(items) == ["s0", "s1"]
    index = msgspec.json.decode((root / INDEX_NAME).read_bytes())
    assert len(index["files"]) == 3
    rest, _ = list_sessions(root, limit=10, cursor=cursor)
    assert _ids(rest) == ["s2", "s3", "s4", "s5"]
    index = msgspec.json.decode((root / INDEX_NAME).read_bytes())
    assert len(index["files"]) == 6
