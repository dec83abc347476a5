"""A search through a real daemon and the mock LLM: offered because ``[web_search]`` is
configured, its results in the event stream, and the API key in neither the session file,
the daemon's log nor any event."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.documents.searchserver import KEY, search_server, url_of
from tests.harness import Home, new_session, run, stdio_client
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

SCENARIO = {
    "name": "web-search",
    "trigger": "search the web",
    "steps": [
        {
            "response": {
                "content": "",
                "tool_calls": [tool_call("web_search", {"query": "json docs"}, "s1")],
            }
        },
        {"response": {"content": "searched."}},
    ],
}


@pytest.fixture
def home() -> Iterator[Home]:
    with Home() as box:
        box.use_scenarios([SCENARIO])
        yield box


async def test_search_in_a_session_keeps_the_key_out(home: Home) -> None:
    with search_server() as server:
        home.user_config(f'[web_search]\nbackend = "brave"\nurl = "{url_of(server)}"\n')
        home.env["BRAVE_API_KEY"] = KEY
        async with stdio_client(home) as client:
            sid = await new_session(client, home)
            state = await client.call("session/state", {"sessionId": sid})
            result, events = await run(client, sid, "search the web")
        assert result["stopReason"] == "end_turn"
        assert server.seen[0]["headers"]["X-Subscription-Token"] == KEY
    ends = [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]
    (end,) = ends
    assert end["details"]["type"] == "web_search"
    assert end["details"]["results"][0]["url"] == "https://docs.python.org/3/library/json.html"
    assert not end.get("isError", False)
    assert KEY not in json.dumps(events)
    assert KEY not in json.dumps(state)
    (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
    assert "docs.python.org" in path.read_text()
    assert KEY not in path.read_text()
    for log in home.root.rglob("*.log"):
        assert KEY not in log.read_text(errors="replace"), log
