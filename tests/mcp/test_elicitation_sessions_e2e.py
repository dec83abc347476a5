"""An MCP server's questions (``elicitation/create``) as part of a session: kept with the
call's result in the session file and shown again after the daemon restarts. The server is
written with the official SDK (:mod:`tests.mcp.eliciting_server`); a real daemon, the mock
LLM, agentctl's client library answering."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from agentd.protocol.questions import AskQuestionParams, AskQuestionResult
from tests.harness import Home, drain, new_session, replayed, run, socket_client, stop
from tests.mcp.conftest import mcp_call, write_user_config
from tests.mcp.test_elicitation_e2e import SERVER, _booking, _end_text

pytestmark = pytest.mark.e2e


@pytest.fixture
def configured(home: Home) -> None:
    home.use_scenarios([mcp_call("elicit-book", "mcp__e__book_table", {"restaurant": "Chez Test"})])
    config = f'[mcp_servers.e]\ncommand = "{sys.executable}"\nargs = ["{SERVER}"]\n'
    write_user_config(home, config)


async def test_the_questions_and_answers_are_kept_and_replayed(
    home: Home, configured: None
) -> None:
    process = home.start_socket_daemon()
    try:

        async def answer(params: AskQuestionParams) -> AskQuestionResult:
            return _booking(params)

        async with socket_client(home, question_handler=answer) as client:
            sid = await new_session(client, home)
            _, items = await run(client, sid, "elicit-book", timeout=60)
        assert _end_text(items).startswith('booked {"date": "2026-12-24"')
        async with socket_client(home) as later:  # the daemon's buffer: sinceSeq
            buffered = later.raw_events(sid)
            await later.call("session/subscribe", {"sessionId": sid, "sinceSeq": 0})
            since = await drain(buffered, until="agent_end")
            buffered.close()
    finally:
        stop(process)
    [path] = list(home.sessions.rglob(f"*{sid}*.jsonl"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    [kept] = [e["message"] for e in lines if e.get("message", {}).get("role") == "tool_result"]
    [round_] = kept["details"]["elicited"]
    assert [q["header"] for q in round_["questions"]] == ["Date", "Party", "Seating", "Vegan"]
    assert round_["answers"][2]["selected"] == ["terrace"]
    live = _asked(items)
    assert [e["event"].get("source") for e in live] == ["mcp", None]  # asked, settled
    assert _asked(since) == live
    process = home.start_socket_daemon()  # a new daemon: only the file knows
    try:
        async with socket_client(home) as again:
            history = await replayed(again, sid)
            page = await again.call("session/messages", {"sessionId": sid})
    finally:
        stop(process)
    settled_again = _asked(history)
    assert [e["event"] for e in settled_again] == [e["event"] for e in live]
    assert {e["seq"] for e in settled_again} == {0}
    kinds = [e["event"]["type"] for e in history]
    after = kinds.index("question_resolved") + 1
    assert history[after]["event"]["message"]["role"] == "tool_result"
    [result] = [m for m in page["messages"] if m["role"] == "tool_result"]
    [shown] = result["details"]["elicited"]
    assert shown["questions"][0]["question"].startswith("Booking at Chez Test: the details?")
    assert shown["answers"][1]["other"] == "4"
    assert shown["answers"][3]["selected"] == ["Yes"]


def _asked(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``question_request`` and ``question_resolved`` events among ``items``."""
    kinds = ("question_request", "question_resolved")
    return [item for item in items if item["event"]["type"] in kinds]
