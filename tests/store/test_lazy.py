"""Message entries kept as references into the file and read back on demand
(:mod:`agentd.store.refs`): the same answers as a fully decoded file, for every query, across
branches, forks, compaction, appends while loaded, reloads and damaged files."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from agentd.errors import StoreReadFailed
from agentd.protocol.content import ImageContent, Message, TextContent, Usage, UserMessage
from agentd.protocol.session_file import CompactionEntry, Entry, MessageEntry
from agentd.store import SessionFile
from agentd.store.refs import CACHE_ENTRIES, MessageRef
from tests.store.conftest import CWD, assistant, result, texts, user

_decode = msgspec.json.Decoder(Entry).decode


def _conversation(file: SessionFile, turns: int, size: int = 200) -> list[Message]:
    """``turns`` prompt → call → result → answer rounds; returns the messages written."""
    written: list[Message] = []
    for n in range(turns):
        call = f"c{n}-{file.header.id}"
        calls = [(call, "bash", {"command": f"echo {n}"})]
        for message in (
            user(f"prompt {n} " + "p" * size),
            assistant(f"calling {n}", calls, usage=Usage(input_tokens=10, output_tokens=n)),
            result(call, f"output {n} " + "o" * size),
            assistant(f"answer {n}", usage=Usage(input_tokens=1, output_tokens=1)),
        ):
            file.append_message(message)
            written.append(message)
    return written


def _decoded_from_disk(path: Path) -> list[Entry]:
    """Every entry of ``path``, decoded the simple way (line by line)."""
    return [_decode(line) for line in path.read_bytes().split(b"\n")[1:] if line]


def test_a_loaded_file_holds_references_and_answers_as_the_decoded_file(root: Path) -> None:
    with SessionFile.create(root, cwd=CWD, session_id="big") as file:
        written = _conversation(file, 30)
    loaded = SessionFile.open(file.path)
    outline = loaded.outline()
    assert all(isinstance(node, MessageRef) for node in outline)
    assert loaded.messages() == written
    assert loaded.entries() == _decoded_from_disk(file.path)
    assert loaded.path_to_leaf() == _decoded_from_disk(file.path)
    assert loaded.usage().output_tokens == sum(range(30)) + 30
    assert loaded.model() == ("p1", "m1")
    assert loaded.dangling_tool_calls() == []
    some = outline[41]
    assert loaded.get(some.id) == _decoded_from_disk(file.path)[41]
    assert loaded.body(some) == loaded.get(some.id)
    assert loaded.entry_count() == 120


def test_the_lru_stays_bounded_and_bulk_reads_bypass_it(root: Path) -> None:
    with SessionFile.create(root, cwd=CWD, session_id="lru") as file:
        _conversation(file, CACHE_ENTRIES // 2 + 10, size=10)
    loaded = SessionFile.open(file.path)
    reader = loaded._reader
    assert reader is not None
    loaded.messages()
    loaded.path_to_leaf()
    assert reader.cached() == 0  # the context is its holder's, not the cache's
    for node in loaded.outline():
        loaded.body(node)
    assert reader.cached() == CACHE_ENTRIES


def test_branch_switches_read_the_other_branch_back(root: Path) -> None:
    file = SessionFile.create(root, cwd=CWD, session_id="br", lock=True)
    first = _conversation(file, 3)
    fork_point = file.outline()[3].id  # the first answer
    old_leaf = file.leaf_id
    file.branch(fork_point)
    file.append_message(user("another way"))
    assert texts(file.messages())[-2:] == ["answer 0", "another way"]
    file.branch(old_leaf)
    assert file.messages() == first
    file.close()
    again = SessionFile.open(file.path)  # the last entry in file order is the leaf
    assert texts(again.messages()) == [*texts(first[:4]), "another way"]
    again.branch(old_leaf)
    assert again.messages() == first


def test_fork_copies_the_branch_from_the_file_and_the_copy_reloads(root: Path) -> None:
    with SessionFile.create(root, cwd=CWD, session_id="src") as file:
        image = ImageContent(data="aGVsbG8=", mime_type="image/png")
        file.append_message(UserMessage(id="img", content=[image], timestamp=1.0))
        written = _conversation(file, 5)
    loaded = SessionFile.open(file.path)
    point = loaded.outline()[8].id
    child = loaded.fork(root, point, session_id="child")
    expected = loaded.messages()[:9]
    assert child.messages() == expected
    child.close()
    reopened = SessionFile.open(child.path)
    assert reopened.messages() == expected
    assert reopened.messages()[0].content == [image]  # stored again in the child's folder
    assert len(written) == 20


def test_compaction_keeps_only_the_kept_part_in_the_context(root: Path) -> None:
    with SessionFile.create(root, cwd=CWD, session_id="cmp") as file:
        _conversation(file, 10)
        kept_from = file.outline()[32].id
        file.append_compaction("the summary", kept_from, tokens_before=999)
        after = _conversation(file, 1)
    loaded = SessionFile.open(file.path)
    context = loaded.messages()
    assert texts(context)[0] == "the summary"
    assert len(context) == 1 + 8 + 4
    assert context[-4:] == after
    assert loaded._reader is not None
    assert loaded._reader.cached() == 0
    assert isinstance(loaded.outline()[40], CompactionEntry)


def test_entries_appended_while_loaded_read_back_after_a_torn_tail(root: Path) -> None:
    with SessionFile.create(root, cwd=CWD, session_id="app") as file:
        _conversation(file, 2)
    with file.path.open("ab") as raw:
        raw.write(b'{"type":"message","id":"torn","parentId":nu')
    loaded = SessionFile.open(file.path, lock=True)
    assert [w.line for w in loaded.warnings] == [10]
    added = _conversation(loaded, 2)
    assert loaded._reader is not None
    for node in loaded.outline():  # read back past the LRU: from the file itself
        assert isinstance(node, MessageRef)
        assert loaded._reader.entry(node, cache=False) == loaded.body(node)
    assert loaded.messages()[-8:] == added
    loaded.close()
    restarted = SessionFile.open(file.path)
    assert restarted.warnings == []
    assert restarted.messages()[-8:] == added
    assert len(restarted.messages()) == 16


def test_a_corrupt_last_line_loses_nothing_before_it(root: Path) -> None:
    with SessionFile.create(root, cwd=CWD, session_id="bad") as file:
        written = _conversation(file, 3)
    with file.path.open("ab") as raw:
        raw.write(b'{"type":"message","id":"x","message":{"role":"user","content":7}}\n')
    loaded = SessionFile.open(file.path)
    assert [(w.line, "corrupt" in w.message) for w in loaded.warnings] == [(14, True)]
    assert loaded.messages() == written


def test_a_line_changed_under_the_daemon_is_a_precise_error(root: Path) -> None:
    with SessionFile.create(root, cwd=CWD, session_id="chg") as file:
        _conversation(file, 2)
    loaded = SessionFile.open(file.path, lock=True)
    target = loaded.outline()[2]
    assert isinstance(target, MessageRef)
    fd = os.open(file.path, os.O_WRONLY)
    try:
        os.pwrite(fd, b"#" * 8, target.offset)
    finally:
        os.close(fd)
    with pytest.raises(StoreReadFailed) as failed:
        loaded.get(target.id)
    assert f"entry {target.id!r}" in failed.value.message
    assert f"at byte {target.offset}" in failed.value.message
    assert failed.value.data == {
        "path": str(file.path), "entryId": target.id, "offset": target.offset
    }  # fmt: skip
    os.truncate(file.path, target.offset + 3)
    with pytest.raises(StoreReadFailed, match="the file ends before"):
        loaded.get(loaded.outline()[3].id)
    loaded.close()


def test_a_tree_in_memory_keeps_its_messages(root: Path) -> None:
    """A tree built from decoded entries (no file) answers from what it holds."""
    from agentd.store.tree import SessionTree

    entries = [
        MessageEntry(id="1", message=user("one")),
        MessageEntry(id="2", parent_id="1", message=assistant("two")),
    ]
    tree = SessionTree(list(entries))
    assert texts(tree.messages()) == ["one", "two"]
    assert tree.get("2") == entries[1]
    assert all(isinstance(node, MessageRef) for node in tree.outline())
    assert [TextContent(text="two")] == tree.messages()[1].content
