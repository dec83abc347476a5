"""Damaged files load with warnings, never fail: torn tails, corrupt lines, crashes,
interrupted tool calls, and entry types from a newer version (kept byte for byte)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from agentd.errors import InvalidParams
from agentd.protocol.content import ToolResultMessage
from agentd.protocol.session_file import SESSION_VERSION, MessageEntry
from agentd.store import INTERRUPTED_TEXT, SessionFile
from tests.store.conftest import assistant, lines, result, texts, user


def _append_raw(path: Path, data: bytes) -> None:
    with path.open("ab") as file:
        file.write(data)


def test_torn_last_line_is_skipped_then_truncated_before_the_next_append(
    session: SessionFile,
) -> None:
    """A crash mid-write leaves a partial line: it is reported, and the next append
    replaces it so the file is valid again."""
    session.append_message(user("kept"))
    session.close()
    _append_raw(session.path, b'{"type":"message","id":"x","parentId":nu')
    reopened = SessionFile.open(session.path)
    assert texts(reopened.messages()) == ["kept"]
    assert [(w.line, "incomplete last line" in w.message) for w in reopened.warnings] == [(3, True)]
    reopened.append_message(user("after"))
    reopened.close()
    assert [len(line) > 0 for line in lines(session.path)] == [True, True, True, False]
    final = SessionFile.open(session.path)
    assert final.warnings == []
    assert texts(final.messages()) == ["kept", "after"]


def test_complete_json_without_its_newline_counts_as_torn(session: SessionFile) -> None:
    """A record is committed only with its LF; a whole object without one is dropped too."""
    session.close()
    line = msgspec.json.encode(MessageEntry(id="z", message=user("no newline")))
    _append_raw(session.path, line)
    reopened = SessionFile.open(session.path)
    assert reopened.entries() == []
    assert len(reopened.warnings) == 1


def test_read_only_use_does_not_modify_a_torn_file(session: SessionFile) -> None:
    """Opening (e.g. to export) leaves the file alone; only an append repairs it."""
    session.close()
    _append_raw(session.path, b"{partial")
    before = session.path.read_bytes()
    SessionFile.open(session.path).close()
    assert session.path.read_bytes() == before


def test_corrupt_middle_line_is_skipped_with_its_line_number(session: SessionFile) -> None:
    """Garbage or a badly typed entry in the middle costs only that line."""
    first = session.append_message(user("one"))
    session.close()
    _append_raw(session.path, b"not json at all\n")
    _append_raw(session.path, b'{"type":"message","id":"bad","parentId":null,"message":42}\n')
    with SessionFile.open(session.path) as reopened:
        reopened.append_message(user("two"))
    loaded = SessionFile.open(session.path)
    assert texts(loaded.messages()) == ["one", "two"]
    assert [w.line for w in loaded.warnings] == [3, 4]
    assert all("corrupt" in w.message for w in loaded.warnings)
    assert loaded.path_to_leaf()[0].id == first.id


def test_entry_with_a_missing_parent_is_reported_and_attached_to_the_entry_before_it(
    session: SessionFile,
) -> None:
    """If a parent line was lost, the orphan continues from the entry before it in the file,
    so the context before the damage is kept (and appends continue that path)."""
    session.append_message(user("one"))
    session.close()
    orphan = MessageEntry(id="o1", parent_id="lost", timestamp="t", message=user("orphan"))
    _append_raw(session.path, msgspec.json.encode(orphan) + b"\n")
    loaded = SessionFile.open(session.path)
    loaded.append_message(user("after"))
    assert texts(loaded.messages()) == ["one", "orphan", "after"]
    assert any("missing parent 'lost'" in w.message for w in loaded.warnings)
    assert texts(SessionFile.open(session.path).messages()) == ["one", "orphan", "after"]


def test_corrupt_tool_call_line_leaves_a_valid_conversation(session: SessionFile) -> None:
    """The assistant line holding a tool call is damaged: the result that answered it is
    left out of the context (providers refuse unpaired results); everything else stays."""
    session.append_message(user("go"))
    session.append_message(assistant("calling", [("c1", "bash", {"command": "ls"})]))
    session.append_message(result("c1", "files"))
    session.append_message(assistant("done"))
    session.close()
    raw = lines(session.path)
    raw[2] = b'{"type":"message","id":broken'
    session.path.write_bytes(b"\n".join(raw))
    loaded = SessionFile.open(session.path)
    assert texts(loaded.messages()) == ["go", "done"]
    assert loaded.warnings[0].line == 3
    assert len(loaded.entries()) == 3


def test_unknown_entry_types_round_trip_byte_identical_and_pass_through(
    root: Path, session: SessionFile
) -> None:
    """Entries from a newer version stay untouched in the file, and in forks, and the
    path walks through them."""
    first = session.append_message(user("before"))
    session.close()
    unknown = (
        b'{"type":"thinking_level_change","id":"u-1","parentId":"%s","timestamp":"t",'
        b'"level":"high","extra":{"nested":[1,2.50,"\\u00e9"]}}' % first.id.encode()
    )
    _append_raw(session.path, unknown + b"\n")
    with SessionFile.open(session.path) as reopened:
        assert reopened.warnings == []
        assert reopened.leaf_id == "u-1"
        after = reopened.append_message(user("after"))
        assert after.parent_id == "u-1"
        assert [e.id for e in reopened.path_to_leaf()] == [first.id, after.id]
        assert texts(reopened.messages()) == ["before", "after"]
        assert reopened.get("u-1") is None
        fork = reopened.fork(root, session_id="forked")
    assert lines(session.path)[2] == unknown
    assert unknown in lines(fork.path)
    assert texts(SessionFile.open(fork.path).messages()) == ["before", "after"]


def test_file_without_a_complete_header_is_invalid_params(root: Path) -> None:
    """Only a missing header makes a file unusable, with a message naming the file."""
    root.mkdir()
    for name, data in {
        "empty.jsonl": b"",
        "torn.jsonl": b'{"type":"sess',
        "notjson.jsonl": b"hello\n",
        "entry.jsonl": b'{"type":"message","id":"a"}\n',
        "huge.jsonl": b'{"type":"session","pad":"' + b"x" * (2 << 20) + b'"}\n',
    }.items():
        (root / name).write_bytes(data)
        with pytest.raises(InvalidParams, match=name):
            SessionFile.open(root / name)


def test_newer_format_version_is_refused(session: SessionFile) -> None:
    """A file written by a newer agentd is not appended to by an older one."""
    session.close()
    raw = lines(session.path)
    raw[0] = raw[0].replace(b'"version":%d' % SESSION_VERSION, b'"version":7')
    session.path.write_bytes(b"\n".join(raw))
    with pytest.raises(InvalidParams, match="newer"):
        SessionFile.open(session.path)


def test_repair_interrupted_answers_every_dangling_call(session: SessionFile) -> None:
    """A run killed mid-tool leaves calls without results; repair adds error results so
    every provider accepts the conversation, and a second repair adds nothing."""
    session.append_message(user("go"))
    session.append_message(assistant("", [("c1", "bash", {"command": "ls"})]))
    session.append_message(result("c1", "file.txt"))
    session.append_message(
        assistant("", [("c2", "bash", {"command": "sleep 99"}), ("c3", "read", {"path": "x"})])
    )
    session.append_message(result("c2", "done"))
    session.close()
    reopened = SessionFile.open(session.path)
    repaired = reopened.repair_interrupted()
    assert len(repaired) == 1
    message = reopened.messages()[-1]
    assert isinstance(message, ToolResultMessage)
    assert (message.tool_call_id, message.tool_name, message.is_error) == ("c3", "read", True)
    assert texts([message]) == [INTERRUPTED_TEXT]
    assert reopened.repair_interrupted() == []
    reopened.close()
    assert SessionFile.open(session.path).dangling_tool_calls() == []


def test_repair_interrupted_only_looks_at_the_current_branch(session: SessionFile) -> None:
    """A dangling call on an abandoned branch is not this branch's business."""
    start = session.append_message(user("go"))
    session.append_message(assistant("", [("c1", "bash", {})]))
    session.branch(start.id)
    session.append_message(assistant("plain answer"))
    assert session.repair_interrupted() == []


_CHILD = """
import os, sys, time
from pathlib import Path
import msgspec
from agentd.protocol.content import TextContent, UserMessage
from agentd.protocol.session_file import MessageEntry
from agentd.store import SessionFile

session = SessionFile.open(Path(sys.argv[1]))
size, tear_after = int(sys.argv[2]), int(sys.argv[3])
n = 0
while True:
    n += 1
    text = str(n) + ":" + "x" * (size * (1 + n % 3))
    message = UserMessage(id=f"m{n}", content=[TextContent(text=text)], timestamp=0)
    if n == tear_after:  # the kernel took only part of this record, then the process died
        line = msgspec.json.encode(MessageEntry(id="torn", message=message))
        os.write(os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND), line[: len(line) // 2])
        print("torn", flush=True)
        time.sleep(60)
    session.append_message(message)
    print(n, flush=True)
"""


def _run_and_kill(path: Path, entry_size: int, tear_after: int, rng: random.Random) -> int:
    """Start a writer, SIGKILL it after it reported 3 appends (or its torn write); return
    how many appends it reported."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), str(entry_size), str(tear_after)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    reported = 0
    while (line := child.stdout.readline().strip()) != "torn" and reported < 3:
        reported = int(line)
    time.sleep(rng.random() * 0.02)  # a random moment to kill it at: the behaviour under test
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    return reported


@pytest.mark.parametrize(("entry_size", "tear_after"), [(200, 0), (3_000_000, 0), (500, 3)])
def test_sigkilled_writer_loses_nothing_complete_and_the_file_recovers(
    session: SessionFile, entry_size: int, tear_after: int
) -> None:
    """A real process appending in a loop is SIGKILLed (at a random moment, or after a
    record it wrote only half of): every entry it reported is there, a torn tail is
    reported and repaired, and the next append leaves a valid file."""
    session.close()
    rng = random.Random(entry_size)
    before = 0
    for _round in range(3):
        reported = _run_and_kill(session.path, entry_size, tear_after, rng)
        with SessionFile.open(session.path) as loaded:
            written = texts(loaded.messages())[before:]
            numbers = [int(text.split(":")[0]) for text in written]
            assert numbers == list(range(1, len(numbers) + 1))
            assert len(numbers) >= reported
            assert all(w.line is not None and "incomplete" in w.message for w in loaded.warnings)
            if tear_after:
                assert len(loaded.warnings) == 1
                assert not session.path.read_bytes().endswith(b"\n")
            loaded.append_message(user("recovered"))
        again = SessionFile.open(session.path)
        assert again.warnings == []
        assert texts(again.messages())[-1] == "recovered"
        before = len(again.messages())
