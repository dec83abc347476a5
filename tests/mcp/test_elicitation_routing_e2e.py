"""Two sessions share one MCP server process (the daemon's pool: same server, same folder)
and its tool asks during both sessions' calls at once. A request whose ``_meta.progressToken``
names its call goes to that call's session only; one that names no call, while calls of both
sessions run, is declined to the server and asks nobody. The server is written with the
official SDK (:mod:`tests.mcp.eliciting_server`, ``pick_colour``); a real daemon, the mock
LLM, two clients of agentctl's library, each answering for its own session."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from agentd.protocol.questions import AskQuestionParams, AskQuestionResult, QuestionAnswer
from tests.harness import Home, new_session, run, socket_client, stop, wait_until_async
from tests.mcp.conftest import mcp_call, write_user_config
from tests.mcp.test_elicitation_e2e import SERVER, _end_text

pytestmark = pytest.mark.e2e

SCENARIOS = [
    mcp_call(f"pick-{who}-{cite}", "mcp__e__pick_colour", {"who": who, "cite_call": cite})
    for who in ("alpha", "beta")
    for cite in (True, False)
]


@pytest.fixture
def daemon(home: Home) -> Any:
    home.use_scenarios(SCENARIOS)
    write_user_config(home, f'[mcp_servers.e]\ncommand = "{sys.executable}"\nargs = ["{SERVER}"]\n')
    process = home.start_socket_daemon()
    yield process
    stop(process)


class Answerer:
    """One client's user: answers every question with ``colour`` and notes what it was
    asked."""

    def __init__(self, colour: str) -> None:
        self.colour = colour
        self.asked: list[AskQuestionParams] = []

    async def __call__(self, params: AskQuestionParams) -> AskQuestionResult:
        self.asked.append(params)
        return AskQuestionResult(answers=[QuestionAnswer(selected=[self.colour])])


async def _both(home: Home, cite: bool) -> tuple[list[Any], Answerer, Answerer]:
    """Run ``pick_colour`` in two sessions at once, one client each; returns the sessions'
    (id, events) pairs and the two answerers."""
    alpha, beta = Answerer("red"), Answerer("blue")
    async with (
        socket_client(home, question_handler=alpha) as one,
        socket_client(home, question_handler=beta) as two,
    ):
        first = await new_session(one, home)
        second = await new_session(two, home)
        runs = await asyncio.gather(
            run(one, first, f"pick-alpha-{cite}", timeout=90),
            run(two, second, f"pick-beta-{cite}", timeout=90),
        )
    return [(first, runs[0][1]), (second, runs[1][1])], alpha, beta


def _questions(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [i["event"] for i in items if i["event"]["type"] == "question_request"]


async def test_a_request_naming_its_call_reaches_that_sessions_user_only(
    home: Home, daemon: Any
) -> None:
    [(first, items_a), (second, items_b)], alpha, beta = await _both(home, cite=True)
    assert _end_text(items_a) == "alpha: accept red"
    assert _end_text(items_b) == "beta: accept blue"
    [asked_a] = alpha.asked
    [asked_b] = beta.asked
    assert (asked_a.session_id, asked_b.session_id) == (first, second)
    assert asked_a.questions[0].question.startswith("A colour for alpha?")
    assert asked_b.questions[0].question.startswith("A colour for beta?")
    [shown_a] = _questions(items_a)
    [shown_b] = _questions(items_b)
    assert "alpha" in shown_a["questions"][0]["question"]
    assert "beta" in shown_b["questions"][0]["question"]


async def test_a_request_naming_no_call_is_declined_and_asks_nobody(
    home: Home, daemon: Any
) -> None:
    [(_, items_a), (_, items_b)], alpha, beta = await _both(home, cite=False)
    assert _end_text(items_a) == "alpha: decline"
    assert _end_text(items_b) == "beta: decline"
    assert alpha.asked == []
    assert beta.asked == []
    assert _questions(items_a) == []
    assert _questions(items_b) == []
    # the daemon's log file is written by its own thread: the line may land a moment later
    await wait_until_async(
        lambda: "elicitation declined" in home.log.read_text(), 30, "the decline in the log"
    )
