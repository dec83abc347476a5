"""The entry tree: branches, forks, compaction, and what the model sees on each branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.errors import InvalidParams, SessionExists
from agentd.protocol.content import ImageContent, Usage, UserMessage
from agentd.protocol.session_file import CompactionEntry, ModelChangeEntry, SessionInfoEntry
from agentd.store import SessionFile, find_session
from tests.store.conftest import CWD, assistant, lines, result, texts, user


def _conversation(session: SessionFile) -> dict[str, str]:
    """u1 → a1 → u2 → a2; returns the entry ids by name."""
    ids = {}
    for name, message in [
        ("u1", user("question 1")),
        ("a1", assistant("answer 1")),
        ("u2", user("question 2")),
        ("a2", assistant("answer 2")),
    ]:
        ids[name] = session.append_message(message).id
    return ids


def test_branch_moves_the_leaf_and_the_next_append_starts_a_sibling(
    session: SessionFile,
) -> None:
    """Branching from a1 gives a context without u2/a2; both branches stay in the file."""
    ids = _conversation(session)
    session.branch(ids["a1"])
    assert texts(session.messages()) == ["question 1", "answer 1"]
    alt = session.append_message(user("question 2, rephrased"))
    assert alt.parent_id == ids["a1"]
    assert texts(session.messages()) == ["question 1", "answer 1", "question 2, rephrased"]
    assert len(session.entries()) == 5
    session.close()
    reopened = SessionFile.open(session.path)
    assert texts(reopened.messages()) == ["question 1", "answer 1", "question 2, rephrased"]
    reopened.branch(ids["a2"])
    assert texts(reopened.messages()) == ["question 1", "answer 1", "question 2", "answer 2"]


def test_branch_to_none_starts_a_new_root(session: SessionFile) -> None:
    """Branching to None means 'before the first entry': the next append is a new root."""
    _conversation(session)
    session.branch(None)
    assert session.messages() == []
    fresh = session.append_message(user("start over"))
    assert fresh.parent_id is None
    assert texts(session.messages()) == ["start over"]


def test_branch_to_an_unknown_entry_is_invalid_params(session: SessionFile) -> None:
    """The leaf never points at nothing."""
    with pytest.raises(InvalidParams, match="no entry 'ghost'"):
        session.branch("ghost")


def test_a_branch_without_appends_does_not_survive_a_restart(session: SessionFile) -> None:
    """Documented: the move becomes durable with the next append."""
    ids = _conversation(session)
    session.branch(ids["u1"])
    session.close()
    assert SessionFile.open(session.path).leaf_id == ids["a2"]


def test_fork_copies_the_path_into_a_self_contained_file(root: Path, session: SessionFile) -> None:
    """The fork holds root → entry (not the other branch), names its parent session,
    and continues independently of the original."""
    ids = _conversation(session)
    session.branch(ids["a1"])
    session.append_message(user("other branch"))
    fork = session.fork(root, ids["u2"], session_id="child")
    assert fork.header.parent_session == "s1"
    assert fork.header.parent_entry_id == ids["u2"]  # its branch point
    assert fork.header.cwd == CWD
    assert fork.leaf_id == ids["u2"]
    assert texts(fork.messages()) == ["question 1", "answer 1", "question 2"]
    fork.append_message(assistant("answer in the fork"))
    fork.close()
    assert len(lines(fork.path)) == 1 + 4 + 1
    reloaded = SessionFile.open(fork.path)
    assert texts(reloaded.messages())[-1] == "answer in the fork"
    assert [e.id for e in reloaded.path_to_leaf()][:3] == [ids["u1"], ids["a1"], ids["u2"]]
    assert texts(session.messages()) == ["question 1", "answer 1", "other branch"]
    assert find_session(root, "child") == fork.path


def test_fork_defaults_to_the_leaf_and_to_a_new_id(root: Path, session: SessionFile) -> None:
    """Without an entry id the whole current branch is copied."""
    _conversation(session)
    fork = session.fork(root)
    assert fork.header.id != "s1"
    assert fork.header.parent_entry_id == session.leaf_id
    assert texts(fork.messages()) == texts(session.messages())
    fork.close()


def test_fork_errors(root: Path, session: SessionFile) -> None:
    """Unknown entries and taken ids are refused before anything is written."""
    _conversation(session)
    with pytest.raises(InvalidParams):
        session.fork(root, "ghost")
    with pytest.raises(SessionExists):
        session.fork(root, session_id="s1")
    assert len(list(root.rglob("*.jsonl"))) == 1


def test_compaction_replaces_older_messages_with_its_summary(session: SessionFile) -> None:
    """messages() = summary, then from firstKeptEntryId up to the compaction, then after."""
    ids = _conversation(session)
    compaction = session.append_compaction("They asked two questions.", ids["u2"], 1234)
    assert isinstance(compaction, CompactionEntry)
    assert compaction.tokens_before == 1234
    session.append_message(user("question 3"))
    messages = session.messages()
    assert texts(messages) == ["They asked two questions.", "question 2", "answer 2", "question 3"]
    assert isinstance(messages[0], UserMessage)
    assert messages[0].id == compaction.id
    assert len(session.path_to_leaf()) == 6


def test_latest_compaction_on_the_branch_wins(session: SessionFile) -> None:
    """A second compaction supersedes the first; one on another branch does not apply."""
    ids = _conversation(session)
    session.append_compaction("first summary", ids["a1"])
    u3 = session.append_message(user("question 3"))
    session.append(CompactionEntry(summary="second summary", first_kept_entry_id=u3.id))
    session.append_message(assistant("answer 3"))
    assert texts(session.messages()) == ["second summary", "question 3", "answer 3"]
    session.branch(ids["a2"])
    assert texts(session.messages()) == ["question 1", "answer 1", "question 2", "answer 2"]


def test_compaction_keeping_nothing_before_it(session: SessionFile) -> None:
    """A firstKeptEntryId that is not before the compaction keeps only what follows."""
    _conversation(session)
    session.append_compaction("all of it", "not-on-this-branch")
    session.append_message(user("next"))
    assert texts(session.messages()) == ["all of it", "next"]


def test_model_title_and_usage(session: SessionFile) -> None:
    """model(): latest model_change or assistant reply on the branch; title(): latest
    session_info in the file; usage(): summed over the branch's replies."""
    assert session.model() is None
    assert session.title() is None
    session.append(SessionInfoEntry(title="first"))
    session.append(ModelChangeEntry(provider="p0", model="m0"))
    assert session.model() == ("p0", "m0")
    start = session.append_message(user("q"))
    session.append_message(assistant("a", model="m1", usage=Usage(input_tokens=10, cost=0.5)))
    session.append_message(assistant("b", model="m2", usage=Usage(input_tokens=5, cost=0.25)))
    assert session.model() == ("p1", "m2")
    assert session.usage() == Usage(input_tokens=15, cost=0.75)
    session.append(ModelChangeEntry(provider="p9", model="m9"))
    assert session.model() == ("p9", "m9")
    session.append(SessionInfoEntry(title="second"))
    session.branch(start.id)
    assert session.usage() == Usage()
    assert session.model() == ("p0", "m0")
    assert session.title() == "second"


def test_tool_results_and_images_survive_the_round_trip(session: SessionFile) -> None:
    """Every message shape is stored as the model saw it."""
    image = ImageContent(data="aGVsbG8=", mime_type="image/png")
    session.append_message(UserMessage(id="img", content=[image], timestamp=2.5))
    session.append_message(assistant("", [("c1", "bash", {"command": "echo hi", "n": [1]})]))
    session.append_message(result("c1", "hi\n", is_error=True))
    session.close()
    assert SessionFile.open(session.path).messages() == session.messages()
    assert session.messages()[0].content == [image]
