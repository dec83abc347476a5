"""SessionFile basics: creation, ids, appends, reopening, leaf, fsync and close."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from agentd.errors import InvalidParams, SessionExists
from agentd.protocol.session_file import (
    SESSION_VERSION,
    CustomEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
)
from agentd.store import SessionFile, cwd_slug, find_session
from tests.harness import scaled
from tests.store.conftest import CWD, assistant, lines, user


def test_create_writes_the_header_at_once_so_an_empty_session_can_be_resumed(root: Path) -> None:
    """The header is on disk before any entry, and reopening gives the same session."""
    created = SessionFile.create(root, cwd=CWD, session_id="empty-1", parent_session="p0")
    assert created.path.parent == root / cwd_slug(CWD)
    assert created.path.name.endswith("_empty-1.jsonl")
    header = msgspec.json.decode(lines(created.path)[0])
    assert header == {
        "type": "session",
        "version": SESSION_VERSION,
        "id": "empty-1",
        "cwd": CWD,
        "createdAt": created.header.created_at,
        "parentSession": "p0",
    }
    reopened = SessionFile.open(created.path)
    assert reopened.header == created.header
    assert reopened.entries() == []
    assert reopened.leaf_id is None
    assert reopened.warnings == []
    created.close()


def test_files_and_folders_are_private(root: Path, session: SessionFile) -> None:
    """Session files are 0600 and the store folders 0700: transcripts are private."""
    assert stat.S_IMODE(session.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(session.path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(root.stat().st_mode) == 0o700


def test_generated_ids_are_unique_random_hex(root: Path) -> None:
    """Without a caller id, each session gets 16 fresh random hex digits."""
    first = SessionFile.create(root, cwd=CWD)
    second = SessionFile.create(root, cwd=CWD)
    assert first.header.id != second.header.id
    assert re.fullmatch("[0-9a-f]{16}", first.header.id)
    first.close()
    second.close()


def test_caller_chosen_ids_are_unique_across_the_store(root: Path, session: SessionFile) -> None:
    """The same id is refused even for another working directory."""
    with pytest.raises(SessionExists, match="s1"):
        SessionFile.create(root, cwd="/elsewhere", session_id="s1")


@pytest.mark.parametrize("bad", ["", "a/b", "../x", "..", "x" * 129, "semi;colon", "sp ace"])
def test_unsafe_session_ids_are_invalid_params(root: Path, bad: str) -> None:
    """Ids that could escape the folder or confuse a shell are refused."""
    with pytest.raises(InvalidParams, match="invalid session id"):
        SessionFile.create(root, cwd=CWD, session_id=bad)
    assert not root.exists() or not any(root.rglob("*.jsonl"))


def test_relative_cwd_is_invalid_params(root: Path) -> None:
    """A session's directory must be absolute."""
    with pytest.raises(InvalidParams, match="absolute"):
        SessionFile.create(root, cwd="proj")


def test_append_links_entries_into_a_chain_and_moves_the_leaf(session: SessionFile) -> None:
    """Each append is a child of the leaf; the store fills id, parentId and timestamp."""
    info = session.append(SessionInfoEntry(title="t"))
    change = session.append(ModelChangeEntry(provider="p1", model="m1"))
    label = session.append(LabelEntry(target_id=info.id, label="start"))
    custom = session.append(CustomEntry(custom_type="editor", data={"cursor": [1, 2]}))
    assert info.parent_id is None
    assert [change.parent_id, label.parent_id, custom.parent_id] == [info.id, change.id, label.id]
    assert session.leaf_id == custom.id
    assert len({info.id, change.id, label.id, custom.id}) == 4
    assert info.timestamp.endswith("Z")
    stored = [msgspec.json.decode(line) for line in lines(session.path)[1:-1]]
    assert [s["type"] for s in stored] == ["session_info", "model_change", "label", "custom"]
    assert stored[0]["parentId"] is None
    assert stored[3]["data"] == {"cursor": [1, 2]}
    assert SessionFile.open(session.path).entries() == [info, change, label, custom]


def test_one_line_per_entry_even_with_newlines_in_content(session: SessionFile) -> None:
    """Content newlines are escaped, so every entry is exactly one LF-terminated line."""
    session.append_message(user("line one\nline two\r\nthree\u2028four"))
    raw = lines(session.path)
    assert len(raw) == 3
    assert raw[-1] == b""
    assert SessionFile.open(session.path).messages()[0].content[0].text == (  # type: ignore[union-attr]
        "line one\nline two\r\nthree\u2028four"
    )


def test_append_message_uses_the_message_id_unless_taken(session: SessionFile) -> None:
    """Message entries are addressable by their message id; a clash gets a fresh id."""
    first = session.append_message(user("hi", "m-1"))
    clash = session.append_message(user("again", "m-1"))
    assert first.id == "m-1"
    assert clash.id != "m-1"
    assert isinstance(clash, MessageEntry)
    assert clash.message.id == "m-1"


def test_caller_entry_ids_are_kept_when_free(session: SessionFile) -> None:
    """An entry built with an unused id keeps it; a used one is replaced."""
    kept = session.append(SessionInfoEntry(id="title-1", title="a"))
    replaced = session.append(SessionInfoEntry(id="title-1", title="b"))
    assert kept.id == "title-1"
    assert replaced.id != "title-1"


def test_reopen_restores_the_leaf_as_the_last_entry_in_file_order(session: SessionFile) -> None:
    """After a restart the leaf is the last line, whichever branch it is on."""
    a = session.append_message(user("a"))
    session.append_message(user("b"))
    session.branch(a.id)
    c = session.append_message(user("c"))
    session.close()
    reopened = SessionFile.open(session.path)
    assert reopened.leaf_id == c.id
    assert [e.id for e in reopened.path_to_leaf()] == [a.id, c.id]


def test_sync_and_close_are_idempotent_and_append_reopens(session: SessionFile) -> None:
    """close() twice is fine, and appending after close reopens the file."""
    session.append_message(user("one"))
    session.sync()
    session.sync()
    session.close()
    session.close()
    session.append_message(user("two"))
    session.close()
    assert len(SessionFile.open(session.path).entries()) == 2


def test_context_manager_closes(root: Path) -> None:
    """Leaving a with-block closes the descriptor."""
    with SessionFile.create(root, cwd=CWD, session_id="cm") as created:
        created.append_message(user("x"))
        fd_count = len(os.listdir("/proc/self/fd"))
    assert len(os.listdir("/proc/self/fd")) == fd_count - 1


def test_find_session_matches_the_exact_id(root: Path) -> None:
    """Ids that are suffixes of other ids, or contain underscores, are told apart."""
    for session_id in ["a_b", "b", "x_b"]:
        SessionFile.create(root, cwd=CWD, session_id=session_id).close()
    found = find_session(root, "b")
    assert found is not None
    assert found.name.endswith("_b.jsonl")
    assert SessionFile.open(found).header.id == "b"
    assert SessionFile.open(find_session(root, "a_b")).header.id == "a_b"  # type: ignore[arg-type]
    assert find_session(root, "missing") is None
    assert find_session(root, "*") is None
    assert find_session(root / "nowhere", "b") is None


def test_get_and_entries(session: SessionFile) -> None:
    """get() finds entries by id; entries() lists them in file order."""
    first = session.append_message(user("a"))
    second = session.append_message(assistant("b"))
    assert session.get(first.id) == first
    assert session.get("nope") is None
    assert session.entries() == [first, second]


_RACER = """
import sys, time
from pathlib import Path
from agentd.errors import SessionExists
from agentd.store import SessionFile

root, cwd, start = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
while time.time() < start:
    pass
try:
    SessionFile.create(root, cwd=cwd, session_id="raced").close()
except SessionExists:
    print("refused")
else:
    print("created")
"""


@pytest.mark.parametrize("same_cwd", [False, True])
def test_processes_racing_for_one_id_never_both_get_it(root: Path, same_cwd: bool) -> None:
    """Daemons sharing a store and creating the same id at once: at most one file survives,
    and only the creator whose file survives is told it succeeded; the others are refused
    (SessionExists), also when they picked the same file name in the same millisecond."""
    start = time.time() + 1.5
    racers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _RACER,
                str(root),
                f"/home/me/p{0 if same_cwd else n}",
                str(start),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(8)
    ]
    answers = [racer.communicate(timeout=scaled(30))[0].strip() for racer in racers]
    files = list(root.glob("*/*_raced.jsonl"))
    assert set(answers) <= {"created", "refused"}, answers
    assert len(answers) == 8
    assert answers.count("created") == len(files) <= 1
