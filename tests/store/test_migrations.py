"""Older files are migrated once on open and rewritten atomically (checked-in fixtures)."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest

from agentd.errors import InvalidParams
from agentd.protocol.content import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from agentd.protocol.session_file import SESSION_VERSION, ModelChangeEntry, SessionInfoEntry
from agentd.protocol.tool_details import (
    BashDetails,
    EditDetails,
    ReadImageDetails,
    ToolErrorDetails,
)
from agentd.store import SessionFile
from agentd.store.migrations import MIGRATIONS, migrate, migrate_v0_to_v1, migrate_v1_to_v2
from tests.store.conftest import lines, texts, user

FIXTURES = Path(__file__).parent.parent / "fixtures" / "sessions"


def _copy(name: str, tmp_path: Path) -> Path:
    """A writable copy of a fixture (the checked-in file is never modified)."""
    return Path(shutil.copy(FIXTURES / name, tmp_path / name))


def test_v0_file_becomes_a_linked_chain_with_current_shapes(tmp_path: Path) -> None:
    """Ids and parent links are added, renamed fields and string content upgraded, and the
    unknown entry type passes through as a tree node."""
    path = _copy("v0_linear.jsonl", tmp_path)
    session = SessionFile.open(path)
    assert session.header.version == SESSION_VERSION
    assert session.header.id == "legacy-0001"
    assert session.header.created_at == "2025-03-01T09:15:00.000Z"
    entries = session.entries()
    assert isinstance(entries[0], ModelChangeEntry)
    assert entries[0].model == "claude-sonnet-4"
    assert [e.id for e in entries[1:4]] == ["msg-1", "msg-2", "msg-3"]
    stored = [msgspec.json.decode(line) for line in lines(path)[1:-1]]
    assert [s["parentId"] for s in stored] == [None] + [s["id"] for s in stored[:-1]]
    messages = session.messages()
    assert [type(m) for m in messages] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        AssistantMessage,
        UserMessage,
    ]
    assert messages[0].content == [TextContent(text="List the Python files, please.")]
    assert texts(messages[2:3]) == ["main.py\nutil.py\n"]
    assert session.title() == "Python files"
    assert session.model() == ("anthropic", "claude-sonnet-4")
    assert session.usage().input_tokens == 280
    assert len(session.path_to_leaf()) == 7
    raw_lines = lines(path)
    assert b'"type":"bookmark"' in raw_lines[5]
    assert msgspec.json.decode(raw_lines[5])["parentId"] == messages[2].id
    assert entries[-1].id not in {"msg-1"}  # a repeated v0 message id gets a fresh entry id
    assert [w.message for w in session.warnings] == [
        f"migrated the file to format version {SESSION_VERSION}"
    ]


def test_migration_rewrites_the_file_once_and_redacts_it(tmp_path: Path) -> None:
    """The file on disk is the current version afterwards (no temp file left), old secrets are gone,
    and a second open is a plain load."""
    path = _copy("v0_linear.jsonl", tmp_path)
    SessionFile.open(path).close()
    header = msgspec.json.decode(lines(path)[0])
    assert header["version"] == SESSION_VERSION
    assert "timestamp" not in header
    assert b"OLDSECRET" not in path.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v0_linear.jsonl"]
    before = path.read_bytes()
    again = SessionFile.open(path)
    assert again.warnings == []
    assert path.read_bytes() == before
    again.append_message(user("continuing"))
    again.close()
    assert texts(SessionFile.open(path).messages())[-1] == "continuing"


def test_damaged_v0_file_migrates_what_it_can(tmp_path: Path) -> None:
    """Corrupt and torn lines of an old file are reported and dropped by the migration."""
    path = _copy("v0_damaged.jsonl", tmp_path)
    session = SessionFile.open(path)
    assert texts(session.messages()) == ["Hello", "Hi."]
    problems = [(w.line, w.message.split(":")[0]) for w in session.warnings]
    assert problems == [
        (3, "skipped a corrupt entry"),
        (5, "skipped an incomplete last line (a write was interrupted)"),
        (None, f"migrated the file to format version {SESSION_VERSION}"),
    ]
    assert path.read_bytes().endswith(b"\n")
    assert SessionFile.open(path).warnings == []


def test_fixtures_are_still_version_0() -> None:
    """The checked-in files keep the old format (tests copy them before opening)."""
    for name in ["v0_linear.jsonl", "v0_damaged.jsonl"]:
        header = msgspec.json.decode(lines(FIXTURES / name)[0])
        assert header.get("version", 0) == 0


def test_migrate_applies_every_step_and_refuses_unknown_versions() -> None:
    """migrate() chains MIGRATIONS from the header's version to the current one."""
    assert MIGRATIONS[0] is migrate_v0_to_v1
    assert MIGRATIONS[1] is migrate_v1_to_v2
    assert len(MIGRATIONS) == SESSION_VERSION
    header, entries = migrate({"type": "session", "id": "x", "cwd": "/", "timestamp": "t"}, [])
    assert header == {"type": "session", "id": "x", "cwd": "/", "version": 2, "createdAt": "t"}
    assert entries == []
    for bad in [3, -1, "1"]:
        with pytest.raises(ValueError, match="version"):
            migrate({"type": "session", "version": bad}, [])


def test_v0_entries_without_timestamps_inherit_the_header_time() -> None:
    """A missing entry timestamp becomes the session's creation time."""
    _header, entries = migrate_v0_to_v1(
        {"type": "session", "id": "x", "cwd": "/", "timestamp": "T0"},
        [{"type": "session_info", "title": "t"}],
    )
    decoded = msgspec.convert(entries[0], SessionInfoEntry)
    assert (decoded.timestamp, decoded.parent_id, decoded.title) == ("T0", None, "t")


def test_an_unusable_old_header_is_refused_and_the_file_left_alone(tmp_path: Path) -> None:
    """A version-0 header without an id cannot become a valid header: nothing is rewritten."""
    path = tmp_path / "old.jsonl"
    data = b'{"type":"session","cwd":"/x","timestamp":"t"}\n{"type":"session_info","title":"a"}\n'
    path.write_bytes(data)
    with pytest.raises(InvalidParams, match="cannot migrate"):
        SessionFile.open(path)
    assert path.read_bytes() == data


def test_v1_tool_details_get_their_type_and_misfits_are_dropped(tmp_path: Path) -> None:
    """Version 1 kept details untyped: each gets its ``type`` (the tool, ``error``,
    ``read_image``); details that fit no type lose only the details, never the message."""
    path = _copy("v1_untyped_details.jsonl", tmp_path)
    session = SessionFile.open(path)
    assert [w.message for w in session.warnings] == [
        f"migrated the file to format version {SESSION_VERSION}"
    ]
    results = [m for m in session.messages() if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["c1", "c2", "c3", "c4", "c5", "c6", "c7"]
    bash, edit, failed, image, unviewable, unknown, bare = (r.details for r in results)
    assert isinstance(bash, BashDetails)
    assert (bash.exit_code, bash.duration_ms, bash.cwd) == (1, 812.5, "/home/me/proj")
    assert isinstance(edit, EditDetails)
    assert (edit.added, edit.removed, edit.diff.startswith("--- a/app.py")) == (1, 1, True)
    assert failed == ToolErrorDetails(error="tool_error")
    assert image == ReadImageDetails(
        path="/home/me/proj/logo.png", mime_type="image/png", bytes=2048
    )
    assert (unviewable, unknown, bare) == (None, None, None)
    assert texts(results) == [f"result of c{i}" for i in range(1, 8)]
    stored = msgspec.json.decode(lines(path)[3])
    assert stored["message"]["details"]["type"] == "bash"
    assert SessionFile.open(path).warnings == []


def test_v1_fixture_is_still_version_1() -> None:
    header = msgspec.json.decode(lines(FIXTURES / "v1_untyped_details.jsonl")[0])
    assert header["version"] == 1
