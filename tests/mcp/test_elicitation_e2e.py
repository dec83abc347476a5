"""MCP servers that ask the user (``elicitation/create``) during a tool call, end to end: a
server written with the official SDK (:mod:`tests.mcp.eliciting_server`), over stdio and
streamable HTTP, a real daemon, the mock LLM, and agentctl's client library answering the
session's questions. Form mode becomes questions; URL mode asks consent, the URL shown; with
nobody to ask the server is told at once (``cancel``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentd.protocol.questions import AskQuestionParams, AskQuestionResult, QuestionAnswer
from tests.harness import Home, new_session, run, socket_client, stop, wait_until
from tests.mcp.conftest import mcp_call, write_user_config
from tests.mcp.test_lifecycle_e2e import _connectable, free_port

pytestmark = pytest.mark.e2e
SERVER = Path(__file__).with_name("eliciting_server.py")
SCENARIOS = [
    mcp_call("elicit-book", "mcp__e__book_table", {"restaurant": "Chez Test"}),
    mcp_call("elicit-sign-in", "mcp__e__sign_in", {}),
    mcp_call("elicit-caps", "mcp__e__capabilities", {}),
    mcp_call("elicit-web-book", "mcp__web__book_table", {"restaurant": "Web Bistro"}),
]


def _stdio_server() -> str:
    return f'[mcp_servers.e]\ncommand = "{sys.executable}"\nargs = ["{SERVER}"]\n'


@pytest.fixture
def daemon(home: Home) -> Any:
    home.use_scenarios(SCENARIOS)
    write_user_config(home, _stdio_server())
    process = home.start_socket_daemon()
    yield process
    stop(process)


def _end_text(items: list[dict[str, Any]]) -> str:
    [end] = [i["event"] for i in items if i["event"]["type"] == "tool_execution_end"]
    return "".join(block.get("text", "") for block in end["result"])


def _booking(params: AskQuestionParams) -> AskQuestionResult:
    """Answers the booking form: by option where the question has options, typed otherwise."""
    answers = []
    for question in params.questions:
        if question.header == "Seating":
            answers.append(QuestionAnswer(selected=["terrace"]))
        elif question.header == "Vegan":
            answers.append(QuestionAnswer(selected=["Yes"]))
        elif question.header == "Party":
            answers.append(QuestionAnswer(other="4"))
        else:
            answers.append(QuestionAnswer(other="2026-12-24"))
    return AskQuestionResult(answers=answers)


async def test_a_form_elicitation_is_asked_and_answered(home: Home, daemon: Any) -> None:
    asked: list[AskQuestionParams] = []

    async def answer(params: AskQuestionParams) -> AskQuestionResult:
        asked.append(params)
        return _booking(params)

    async with socket_client(home, question_handler=answer) as client:
        sid = await new_session(client, home)
        await client.call("session/subscribe", {"sessionId": sid})
        result, items = await run(client, sid, "elicit-book", timeout=60)
        _, caps = await run(client, sid, "elicit-caps")
    assert result["stopReason"] == "end_turn"
    [params] = asked
    assert params.source == "mcp"
    assert params.server == "e"
    assert params.tool_call_id == "call_0"
    assert [q.header for q in params.questions] == ["Date", "Party", "Seating", "Vegan"]
    seating = params.questions[2]
    assert [o.label for o in seating.options] == ["inside", "terrace"]
    assert not params.questions[0].options  # a typed answer
    assert params.questions[0].question.startswith("Booking at Chez Test: the details?")
    assert _end_text(items) == (
        'booked {"date": "2026-12-24", "party": 4, "seating": "terrace", "vegan": true}'
    )
    kinds = [i["event"]["type"] for i in items]
    assert kinds.index("question_request") < kinds.index("question_resolved")
    assert _end_text(caps) == '{"form": {}, "url": {}}'


async def test_a_declined_form_is_declined_to_the_server(home: Home, daemon: Any) -> None:
    async def decline(params: AskQuestionParams) -> AskQuestionResult:
        return AskQuestionResult(answers=None)

    async with socket_client(home, question_handler=decline) as client:
        sid = await new_session(client, home)
        _, items = await run(client, sid, "elicit-book", timeout=60)
    assert _end_text(items) == "not booked (decline)"


async def test_nobody_to_ask_cancels_at_once(home: Home, daemon: Any) -> None:
    async with socket_client(home) as client:
        sid = await new_session(client, home)
        _, items = await run(client, sid, "elicit-book", timeout=60)
    assert _end_text(items) == "not booked (cancel)"
    resolved = [i["event"] for i in items if i["event"]["type"] == "question_resolved"]
    assert "no user can answer" in resolved[0]["reason"]


async def test_url_mode_shows_the_url_and_asks_consent(home: Home, daemon: Any) -> None:
    asked: list[AskQuestionParams] = []

    async def consent(params: AskQuestionParams) -> AskQuestionResult:
        asked.append(params)
        return AskQuestionResult(answers=[QuestionAnswer(selected=["Open it"])])

    async def refuse(params: AskQuestionParams) -> AskQuestionResult:
        return AskQuestionResult(answers=[QuestionAnswer(selected=["Do not open it"])])

    async with socket_client(home, question_handler=consent) as client:
        sid = await new_session(client, home)
        _, accepted = await run(client, sid, "elicit-sign-in", timeout=60)
    async with socket_client(home, question_handler=refuse) as client:
        sid = await new_session(client, home)
        _, refused = await run(client, sid, "elicit-sign-in", timeout=60)
    [params] = asked
    assert params.url == "https://auth.example.test/login?code=42"
    assert params.questions[0].question == "Sign in to the example service"
    assert _end_text(accepted) == "sign-in accept"
    assert _end_text(refused) == "sign-in decline"


async def test_a_streamable_http_server_elicits_too(home: Home) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stderr=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    home.use_scenarios(SCENARIOS)
    try:
        wait_until(lambda: _connectable(port), 30, "the HTTP server to listen")
        write_user_config(home, f'[mcp_servers.web]\nurl = "http://127.0.0.1:{port}/mcp"\n')
        process = home.start_socket_daemon()
        try:

            async def answer(params: AskQuestionParams) -> AskQuestionResult:
                return _booking(params)

            async with socket_client(home, question_handler=answer) as client:
                sid = await new_session(client, home)
                _, items = await run(client, sid, "elicit-web-book", timeout=60)
        finally:
            stop(process)
    finally:
        server.kill()
        server.wait()
    assert _end_text(items).startswith('booked {"date": "2026-12-24", "party": 4')
