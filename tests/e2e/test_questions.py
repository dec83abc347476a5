"""The ``ask_user`` tool over the wire: a client that declared the ``questions`` capability is
asked with ``session/askQuestion`` and its answer is the tool result; nobody to ask answers at
once; a pending question survives its client, is offered to the next, ends at the timeout and
on cancel; ``question/answer`` from any client settles it. Real socket daemon, mock LLM,
agentctl's client library as the clients."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from agentd.protocol.questions import AskQuestionParams, AskQuestionResult, QuestionAnswer
from tests.harness import Home, drain, new_session, replayed, run, scaled, socket_client, stop
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

QUESTIONS = [
    {
        "question": "Which database should the service use?",
        "header": "Database",
        "options": [
            {"label": "Postgres", "description": "a server"},
            {"label": "SQLite", "description": "a file"},
        ],
    },
    {
        "question": "Which features go in the first release?",
        "header": "Features",
        "options": [{"label": "Auth"}, {"label": "Search"}, {"label": "Export"}],
        "multi_select": True,
    },
]
ASK = {
    "name": "ask-user",
    "trigger": "ask me about the plan",
    "steps": [
        {"response": {"tool_calls": [tool_call("ask_user", {"questions": QUESTIONS}, "ask_1")]}},
        {"response": {"content": "Going with what you chose."}},
    ],
}
ANSWERS = [QuestionAnswer(selected=["SQLite"]), QuestionAnswer(selected=["Auth", "Export"])]


@pytest.fixture
def daemon(home: Home) -> Any:
    home.use_scenarios([ASK])
    process = home.start_socket_daemon()
    yield process
    stop(process)


def _plain(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of ``session/event`` params."""
    return [item["event"] for item in items]


def _tool_result(events: list[dict[str, Any]]) -> dict[str, Any]:
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert len(ends) == 1, events
    return ends[0]


def _text(end: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in end["result"])


async def test_a_client_answers_a_single_and_a_multi_select_question(
    home: Home, daemon: Any
) -> None:
    asked: list[AskQuestionParams] = []

    async def answer(params: AskQuestionParams) -> AskQuestionResult:
        asked.append(params)
        return AskQuestionResult(answers=ANSWERS)

    async with socket_client(home, question_handler=answer) as client:
        sid = await new_session(client, home)
        await client.call("session/subscribe", {"sessionId": sid})
        result, items = await run(client, sid, "ask me about the plan")
    events = _plain(items)
    assert result["stopReason"] == "end_turn"
    [params] = asked
    assert [q.header for q in params.questions] == ["Database", "Features"]
    assert params.questions[1].multi_select
    assert params.tool_call_id == "ask_1"
    kinds = [e["type"] for e in events]
    assert kinds.index("question_request") < kinds.index("question_resolved")
    resolved = next(e for e in events if e["type"] == "question_resolved")
    assert resolved["answers"][1] == {"selected": ["Auth", "Export"], "other": None}
    end = _tool_result(events)
    assert not end.get("isError")
    assert _text(end) == (
        "The user answered:\n"
        '"Which database should the service use?" = SQLite\n'
        '"Which features go in the first release?" = Auth, Export'
    )
    assert end["details"]["answers"][0]["selected"] == ["SQLite"]
    # kept with the tool result: another client's history shows question and answer
    async with socket_client(home) as reader:
        page = await reader.call("session/messages", {"sessionId": sid})
    results = [m for m in page["messages"] if m["role"] == "tool_result"]
    assert results[0]["details"]["type"] == "ask_user"
    assert results[0]["details"]["questions"][0]["question"].startswith("Which database")
    lines = [json.loads(line) for line in _session_file(home, sid).read_text().splitlines()]
    kept = [e for e in lines if e.get("message", {}).get("role") == "tool_result"]
    assert kept[0]["message"]["details"]["answers"][1]["selected"] == ["Auth", "Export"]
    assert kept[0]["message"]["details"]["questionId"] == resolved["questionId"]


async def test_a_reload_replays_the_question_and_its_answer(home: Home) -> None:
    """A new daemon's ``session/load {replay}`` sends the settled question again, as live:
    ``question_request`` then ``question_resolved`` (seq 0, the live id), before the
    result."""
    home.use_scenarios([ASK])

    async def answer(params: AskQuestionParams) -> AskQuestionResult:
        return AskQuestionResult(answers=ANSWERS)

    process = home.start_socket_daemon()
    try:
        async with socket_client(home, question_handler=answer) as client:
            sid = await new_session(client, home)
            _, items = await run(client, sid, "ask me about the plan")
    finally:
        stop(process)
    [live] = [e for e in _plain(items) if e["type"] == "question_request"]
    process = home.start_socket_daemon()
    try:
        async with socket_client(home) as again:
            history = await replayed(again, sid)
    finally:
        stop(process)
    assert {item["seq"] for item in history} == {0}
    events = _plain(history)
    kinds = [e["type"] for e in events]
    asked = kinds.index("question_request")
    assert kinds[asked : asked + 3] == ["question_request", "question_resolved", "message_end"]
    assert events[asked + 2]["message"]["role"] == "tool_result"
    assert events[asked] == live
    assert events[asked + 1]["answers"][1]["selected"] == ["Auth", "Export"]


def _session_file(home: Home, session_id: str) -> Path:
    [path] = list(home.sessions.rglob(f"*{session_id}*.jsonl"))
    return path


async def test_nobody_to_ask_answers_at_once(home: Home, daemon: Any) -> None:
    """A client without the capability (a script, a pipe) is never asked: the tool returns
    at once telling the model to decide and say what it assumed."""
    async with socket_client(home) as client:
        sid = await new_session(client, home)
        await client.call("session/subscribe", {"sessionId": sid})
        started = time.monotonic()
        result, items = await run(client, sid, "ask me about the plan")
        events = _plain(items)
        took = time.monotonic() - started
    assert result["stopReason"] == "end_turn"
    text = _text(_tool_result(events))
    assert text.startswith("No answer from the user: no user can answer")
    assert "say in your reply what you assumed" in text
    resolved = next(e for e in events if e["type"] == "question_resolved")
    assert resolved.get("answers") is None
    assert "no user can answer" in resolved["reason"]
    assert took < scaled(20)  # never the question timeout (600 s)


async def test_a_pending_question_is_offered_again_after_a_reconnect(
    home: Home, daemon: Any
) -> None:
    """The client asked first goes away without answering; the next one subscribes, its
    replay holds the question, it is asked, and its answer is the result."""
    first_asked = asyncio.Event()

    async def never(params: AskQuestionParams) -> AskQuestionResult:
        first_asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def second(params: AskQuestionParams) -> AskQuestionResult:
        return AskQuestionResult(answers=[QuestionAnswer(other="MySQL"), ANSWERS[1]])

    async with socket_client(home) as runner:
        sid = await new_session(runner, home)
        async with socket_client(home, question_handler=never) as leaving:
            await leaving.call("session/subscribe", {"sessionId": sid})
            prompt = asyncio.ensure_future(
                runner.call("session/prompt", {"sessionId": sid, "text": "ask me about the plan"})
            )
            await asyncio.wait_for(first_asked.wait(), scaled(30))
        async with socket_client(home, question_handler=second) as arriving:
            stream = arriving.raw_events(sid)
            await arriving.call("session/subscribe", {"sessionId": sid, "sinceSeq": 0})
            replayed = _plain(await drain(stream, until="agent_end", timeout=60))
            stream.close()
        result = await asyncio.wait_for(prompt, scaled(30))
    assert result["stopReason"] == "end_turn"
    kinds = [e["type"] for e in replayed]
    assert kinds.count("question_request") == 1
    assert 'Other: MySQL"' not in _text(_tool_result(replayed))
    assert "= Other: MySQL" in _text(_tool_result(replayed))


async def test_cancel_ends_the_wait_and_question_answer_settles_once(
    home: Home, daemon: Any
) -> None:
    """``question/answer`` with answers that do not fit is refused; a cancel of the run ends
    the wait with ``question_resolved`` (cancelled) and the run ends cancelled."""
    asked = asyncio.Event()

    async def hold(params: AskQuestionParams) -> AskQuestionResult:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async with socket_client(home, question_handler=hold) as client:
        sid = await new_session(client, home)
        stream = client.raw_events(sid)
        await client.call("session/subscribe", {"sessionId": sid})
        prompt = asyncio.ensure_future(
            client.call("session/prompt", {"sessionId": sid, "text": "ask me about the plan"})
        )
        await asyncio.wait_for(asked.wait(), scaled(30))
        seen = _plain(await drain(stream, until="question_request"))
        qid = seen[-1]["questionId"]
        wrong = {"selected": ["MySQL"]}
        bad = await client.call(
            "question/answer", {"sessionId": sid, "questionId": qid, "answers": [wrong, wrong]}
        )
        assert bad == {"ok": False}
        await client.call("session/cancel", {"sessionId": sid})
        result = await asyncio.wait_for(prompt, scaled(30))
        rest = _plain(await drain(stream, until="agent_end"))
        stream.close()
        late = await client.call(
            "question/answer", {"sessionId": sid, "questionId": qid, "answers": None}
        )
    assert result["stopReason"] == "cancelled"
    resolved = [e for e in rest if e["type"] == "question_resolved"]
    assert [e["reason"] for e in resolved] == ["the run was cancelled"]
    assert late == {"ok": False}


async def test_question_answer_from_another_client_wins(home: Home, daemon: Any) -> None:
    """A client that is shown the question but answers through ``question/answer`` (a web
    page, an editor's card) settles it; the asked client's request is withdrawn."""

    async def hold(params: AskQuestionParams) -> AskQuestionResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async with socket_client(home, question_handler=hold) as client:
        sid = await new_session(client, home)
        stream = client.raw_events(sid)
        await client.call("session/subscribe", {"sessionId": sid})
        prompt = asyncio.ensure_future(
            client.call("session/prompt", {"sessionId": sid, "text": "ask me about the plan"})
        )
        qid = _plain(await drain(stream, until="question_request", timeout=30))[-1]["questionId"]
        answers = [{"selected": ["Postgres"]}, {"selected": [], "other": "none yet"}]
        async with socket_client(home) as other:
            ok = await other.call(
                "question/answer", {"sessionId": sid, "questionId": qid, "answers": answers}
            )
        result = await asyncio.wait_for(prompt, scaled(30))
        events = _plain(await drain(stream, until="agent_end"))
        stream.close()
    assert ok == {"ok": True}
    assert result["stopReason"] == "end_turn"
    assert _text(_tool_result(events)).endswith("= Other: none yet")


async def test_the_wait_ends_at_the_configured_timeout(home: Home) -> None:
    config = home.config_dir / "agentd" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[permissions]\nquestion_timeout = 2\n")
    home.use_scenarios([ASK])
    process = home.start_socket_daemon()
    try:

        async def hold(params: AskQuestionParams) -> AskQuestionResult:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

        async with socket_client(home, question_handler=hold) as client:
            sid = await new_session(client, home)
            await client.call("session/subscribe", {"sessionId": sid})
            result, items = await run(client, sid, "ask me about the plan", timeout=60)
    finally:
        stop(process)
    assert result["stopReason"] == "end_turn"
    assert _text(_tool_result(_plain(items))).startswith(
        "No answer from the user: nobody answered within 2 s."
    )


CHILD_ASK = {
    **ASK,
    "name": "child-ask",
    "trigger": "the subagent asks about the plan",
}
PARENT = {
    "name": "parent-task",
    "trigger": "delegate the plan",
    "steps": [
        {
            "response": {
                "tool_calls": [
                    tool_call(
                        "task",
                        {"description": "Plan it", "prompt": "the subagent asks about the plan"},
                        "task_1",
                    )
                ]
            }
        },
        {"response": {"content": "The subagent is done."}},
    ],
}


async def test_a_subagents_question_reaches_the_parents_client(home: Home) -> None:
    """The question of a ``task`` call's child session goes to the clients watching the
    parent, as its approvals do; the answer is the child's tool result."""
    home.use_scenarios([CHILD_ASK, PARENT])
    process = home.start_socket_daemon()
    asked: list[AskQuestionParams] = []
    try:

        async def answer(params: AskQuestionParams) -> AskQuestionResult:
            asked.append(params)
            return AskQuestionResult(answers=ANSWERS)

        async with socket_client(home, question_handler=answer) as client:
            sid = await new_session(client, home)
            await client.call("session/subscribe", {"sessionId": sid})
            result, _items = await run(client, sid, "delegate the plan", timeout=60)
    finally:
        stop(process)
    assert result["stopReason"] == "end_turn"
    [params] = asked
    assert params.session_id != sid  # the child's session
    child = [p for p in home.sessions.rglob(f"*{params.session_id}*.jsonl")]
    assert child, "the child session's file"
    lines = [json.loads(line) for line in child[0].read_text().splitlines()]
    texts = [
        block.get("text", "")
        for e in lines
        if e.get("message", {}).get("role") == "tool_result"
        for block in e["message"]["content"]
    ]
    assert any(t.startswith("The user answered:") for t in texts), texts
