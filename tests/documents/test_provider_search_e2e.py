"""The provider's own web search end to end: a real daemon, the real Anthropic and Responses
provider code over real HTTP, the mock LLM scripting a server-side search in each format.

The search is offered as the provider's tool (its filters and ``max_uses`` in the request),
its call and results come back as ``tool_execution_start``/``_end`` events with
``WebSearchDetails``, the reply keeps it (and its citations) in the session file, the next
request sends the provider's blocks back, a replay shows it again, and in ``ask`` mode it is
offered only under an allow rule."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import BUILT_IN, parse_scenarios
from tests.harness import Home, drain, new_session, run, stdio_client

pytestmark = pytest.mark.e2e

DOCS = "https://docs.python.org/3/whatsnew/3.13.html"
SCENARIO = {
    "name": "provider-search",
    "trigger": "what is new in python",
    "steps": [
        {
            "response": {
                "content": "Python 3.13 has a new interactive interpreter.",
                "server_searches": [
                    {
                        "query": "python 3.13 what's new",
                        "results": [
                            {"url": DOCS, "title": "What's New In Python 3.13"},
                            {"url": "https://spam.example.com/py", "title": "Spam"},
                        ],
                    },
                    {"query": "python 3.13 release date", "results": [{"url": DOCS}]},
                ],
                "citations": [
                    {"url": DOCS, "title": "What's New", "cited_text": "new interactive"}
                ],
            }
        }
    ],
}
FORMATS = {"anthropic": "anthropic", "responses": "openai-responses"}
CONFIG = """
[providers.p]
api = "{api}"
base_url = "{url}"
models = ["mock-model"]

[web_search]
backend = "provider"
max_uses = 1
allowed_domains = ["python.org"]
"""


@pytest.fixture
def home() -> Iterator[Home]:
    with Home() as box:
        yield box


@pytest.fixture
async def llm() -> AsyncIterator[MockLLMServer]:
    builtin = json.loads(BUILT_IN.read_text())
    scenarios = parse_scenarios({**builtin, "scenarios": [SCENARIO, *builtin["scenarios"]]})
    async with MockLLMServer(scenarios) as server:
        yield server


def events_of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["event"] for e in events if e["event"]["type"] == kind]


@pytest.mark.parametrize("wire", sorted(FORMATS))
async def test_a_provider_side_search_is_a_tool_call(
    home: Home, llm: MockLLMServer, wire: str
) -> None:
    home.user_config(CONFIG.format(api=FORMATS[wire], url=llm.url))
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="p")
        result, events = await run(client, sid, "what is new in python 3.13?")
        assert result["stopReason"] == "end_turn"
        first = llm.requests[-1]
        await run(client, sid, "thanks, what is new in python then")
        again = llm.requests[-1]
        messages = await client.call("session/messages", {"sessionId": sid})

    starts, ends = (
        events_of(events, "tool_execution_start"),
        events_of(events, "tool_execution_end"),
    )
    assert [s["name"] for s in starts] == ["web_search", "web_search"]
    assert starts[0]["args"] == {"query": "python 3.13 what's new"}
    assert starts[0]["kind"] == "search"
    ok, refused = ends
    assert ok["toolCallId"] == starts[0]["toolCallId"]
    assert ok["details"]["type"] == "web_search"
    assert ok["details"]["backend"] == "p"
    assert [r["url"] for r in ok["details"]["results"]] == [DOCS]  # the provider kept the filter
    assert not ok.get("isError", False)
    assert refused.get("isError") is True  # past max_uses = 1
    _check_request(wire, first)

    reply = messages["messages"][1]
    kinds = [block["type"] for block in reply["content"]]
    assert kinds.count("server_tool_call") == 2
    text = next(block for block in reply["content"] if block["type"] == "text")
    assert text["citations"][0]["url"] == DOCS
    assert text["citations"][0]["citedText"] == "new interactive"
    (path,) = home.sessions.glob(f"*/*_{sid}.jsonl")
    assert "server_tool_call" in path.read_text()
    _check_sent_back(wire, again)


def _check_request(wire: str, body: dict[str, Any]) -> None:
    """The search went out as the provider's own tool, with the configured limits; the
    function tools are still there and no function is named web_search."""
    tools = body["tools"]
    if wire == "anthropic":
        (search,) = [t for t in tools if t.get("type") == "web_search_20250305"]
        assert search == {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 1,
            "allowed_domains": ["python.org"],
        }
        assert not [t for t in tools if t.get("name") == "web_search" and "input_schema" in t]
    else:
        (search,) = [t for t in tools if t.get("type") == "web_search"]
        assert search == {"type": "web_search", "filters": {"allowed_domains": ["python.org"]}}
        assert body["max_tool_calls"] == 1
        assert "web_search_call.action.sources" in body["include"]
        assert not [t for t in tools if t.get("name") == "web_search"]
    assert any(t.get("name") == "read" for t in tools)


def _check_sent_back(wire: str, body: dict[str, Any]) -> None:
    """The next request carries the provider's own blocks of the search unchanged."""
    if wire == "anthropic":
        assistant = next(m for m in body["messages"] if m["role"] == "assistant")
        kinds = [block["type"] for block in assistant["content"]]
        assert kinds[:2] == ["server_tool_use", "web_search_tool_result"]
        assert assistant["content"][0]["input"] == {"query": "python 3.13 what's new"}
        assert assistant["content"][1]["content"][0]["encrypted_content"] == "mock-encrypted-0-0"
    else:
        calls = [item for item in body["input"] if item.get("type") == "web_search_call"]
        assert [call["id"] for call in calls] == ["ws_mock_0", "ws_mock_1"]
        assert calls[0]["action"]["query"] == "python 3.13 what's new"


async def test_a_replay_shows_the_search_again(home: Home, llm: MockLLMServer) -> None:
    home.user_config(CONFIG.format(api="anthropic", url=llm.url))
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="p")
        await run(client, sid, "what is new in python 3.13?")
    async with stdio_client(home) as client:
        stream = client.raw_events(sid)
        await client.call("session/load", {"sessionId": sid, "replay": True})
        replayed = await drain(stream, until="tool_execution_end")
        replayed += await drain(stream, until="tool_execution_end")
    ends = events_of(replayed, "tool_execution_end")
    assert [e["details"]["query"] for e in ends] == [
        "python 3.13 what's new",
        "python 3.13 release date",
    ]
    assert [r["url"] for r in ends[0]["details"]["results"]] == [DOCS]


@pytest.mark.parametrize("rule", [False, True])
async def test_ask_mode_offers_it_only_under_an_allow_rule(
    home: Home, llm: MockLLMServer, rule: bool
) -> None:
    """A search the provider runs cannot wait for an approval: in ``ask`` mode it is not
    offered (the model never hears of it) unless ``allow = ["web_search"]``."""
    config = 'permission_mode = "ask"\n' + CONFIG.format(api="anthropic", url=llm.url)
    if rule:
        config += '[permissions]\nallow = ["web_search"]\n'
    home.user_config(config)
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider="p")
        result, events = await run(client, sid, "what is new in python 3.13?")
    assert result["stopReason"] == "end_turn"
    offered = [t for t in llm.requests[-1].get("tools", []) if t.get("type", "").startswith("web")]
    assert bool(offered) is rule
    assert len(events_of(events, "tool_execution_end")) == (2 if rule else 0)
