"""Where compaction cuts: about ``keep_tokens`` of recent context, never at a tool result,
always keeping the latest user message; and what the cut context becomes in the file."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from agentd.agent.messages import estimate_tokens
from agentd.protocol.content import Message, ToolResultMessage, UserMessage
from agentd.session.compaction import context_tokens, cut_index
from agentd.store import SessionFile
from tests.store.conftest import CWD, assistant, result, texts, user


def tokens(message: Message) -> int:
    """The per-message estimate ``cut_index`` uses (encoded bytes / 4)."""
    return len(msgspec.json.encode(message)) // 4


def tool_turn(n: int, output: str = "x" * 400) -> list[Message]:
    """A user prompt, a reply with two parallel tool calls, their results, a final reply."""
    calls = [(f"c{n}a", "bash", {"command": "ls"}), (f"c{n}b", "bash", {"command": "pwd"})]
    return [
        user(f"prompt {n}"),
        assistant(f"calling {n}", calls),
        result(f"c{n}a", output),
        result(f"c{n}b", output),
        assistant(f"done {n}"),
    ]


def test_cut_keeps_about_keep_tokens_of_the_most_recent_messages() -> None:
    """The kept tail fits ``keep_tokens``; one more message would not."""
    messages = [message for n in range(6) for message in tool_turn(n, "y" * 40)]
    keep = sum(tokens(m) for m in messages[-6:])
    assert cut_index(messages, keep) == len(messages) - 6
    assert cut_index(messages, keep - 1) == len(messages) - 5


@pytest.mark.parametrize("offset", range(1, 12))
def test_cut_never_starts_at_a_tool_result(offset: int) -> None:
    """Whatever the budget, the first kept message is not a result cut off from its call."""
    messages = [message for n in range(4) for message in tool_turn(n)]
    keep = sum(tokens(m) for m in messages[-offset:])
    cut = cut_index(messages, keep)
    assert not isinstance(messages[cut], ToolResultMessage)
    answered = {m.tool_call_id for m in messages[cut:] if isinstance(m, ToolResultMessage)}
    called = {
        c.id
        for m in messages[cut:]
        if not isinstance(m, UserMessage | ToolResultMessage)
        for c in m.tool_calls()
    }
    assert answered <= called


def test_latest_user_message_is_kept_even_past_the_budget() -> None:
    """A huge tool output after the last prompt: the cut still keeps that prompt."""
    messages = [*tool_turn(0), *tool_turn(1, "z" * 40_000)]
    cut = cut_index(messages, keep_tokens=100)
    assert cut == 5
    assert texts(messages[cut:])[0] == "prompt 1"
    assert cut_index(messages, keep_tokens=0) == 5


def test_budget_covering_everything_cuts_nothing() -> None:
    """With room for the whole conversation the cut is 0 (nothing to compact)."""
    messages = tool_turn(0)
    assert cut_index(messages, keep_tokens=estimate_tokens(messages) + 1) == 0
    assert cut_index([], keep_tokens=10) == 0


def test_context_tokens_use_the_last_reported_usage() -> None:
    """Reported input + output tokens of the last reply, plus an estimate of what followed."""
    from agentd.protocol.content import Usage

    reply = assistant("hi", usage=Usage(input_tokens=5000, output_tokens=100))
    later = user("next")
    assert context_tokens([user("a"), reply, later]) == 5100 + estimate_tokens([later])
    assert context_tokens([user("a"), later]) == estimate_tokens([user("a"), later])


def test_compaction_at_the_cut_gives_summary_then_the_kept_messages(tmp_path: Path) -> None:
    """What the compactor writes: the context becomes the summary and the messages from the
    first kept one on, and it stays so after reopening the file."""
    messages = [message for n in range(3) for message in tool_turn(n)]
    with SessionFile.create(tmp_path, cwd=CWD) as session:
        for message in messages:
            session.append_message(message)
        cut = cut_index(messages, keep_tokens=tokens(messages[-1]) * 3)
        session.append_compaction("the summary", messages[cut].id, estimate_tokens(messages))
        assert texts(session.messages()) == ["the summary", *texts(messages[cut:])]
    reopened = SessionFile.open(session.path)
    assert [m.id for m in reopened.messages()[1:]] == [m.id for m in messages[cut:]]
