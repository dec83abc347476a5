"""``POST /chat`` over a run that starts a subagent: the reply is the parent's, and ``done``
comes when the parent's run ends (a subagent's events reach the conversation's subscriber
too, under the child's session). Real daemon, mock LLM."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.subagents.scenarios import SUBAGENT_SCENARIOS
from tests.web.conftest import WebDaemon, web_daemon
from tests.web.test_http import sse_events

pytestmark = pytest.mark.e2e


@pytest.fixture
def web() -> Iterator[WebDaemon]:
    with web_daemon(SUBAGENT_SCENARIOS) as daemon:
        yield daemon


def test_chat_streams_the_parents_reply_and_ends_with_its_run(web: WebDaemon) -> None:
    body = {"message": "delegate the answer"}
    with web.signed_in() as client, client.stream("POST", "/chat", json=body) as stream:
        events = sse_events(stream.iter_lines(), until="done")
    text = "".join(data["content"] for name, data in events if name == "text")
    assert text == "Delegating.The subagent says the answer is 42."
    assert [data["name"] for name, data in events if name == "tool"] == ["task"]
    assert [name for name, _ in events].count("done") == 1
