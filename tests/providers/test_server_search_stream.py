"""The provider's own web search in recorded-shape streams of both formats: the call and its
result as tool events, the reply's ``server_tool_call`` blocks and citations, the request's
tool definition, and the provider's blocks sent back unchanged (Chat Completions leaves the
search out)."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
import pytest

from agentd.protocol.content import AssistantMessage, Citation, ServerToolCall, TextContent
from agentd.protocol.document_details import WebSearchDetails
from agentd.protocol.events import ToolExecutionEnd, ToolExecutionStart
from agentd.providers.anthropic_messages import to_anthropic_messages
from agentd.providers.responses_messages import to_responses_input
from agentd.providers.stream import HttpProvider
from agentd.toolspec import ServerSearch, ToolSpec
from tests.providers.replay import (
    Outcome,
    Replay,
    collect,
    fixture,
    provider_for,
    request,
    sse,
    user,
)

DOCS = "https://docs.python.org/3/whatsnew/3.13.html"
SEARCH = ToolSpec(
    "web_search",
    "Search the web.",
    {"type": "object"},
    ServerSearch(max_uses=2, allowed_domains=("python.org",), blocked_domains=("spam.example",)),
)
READ = ToolSpec("read", "Read a file.", {"type": "object", "properties": {}})


async def replay(api: str, chunk: int | None = None) -> Outcome:
    transport = Replay([sse(fixture(api, "web_search"), chunk=chunk)])
    async with transport.client() as http:
        return await collect(provider_for(api, http), request(tools=[READ, SEARCH]))


@pytest.mark.parametrize("chunk", [None, 1, 9])
async def test_anthropic_search_blocks(chunk: int | None) -> None:
    outcome = await replay("anthropic", chunk)
    message = outcome.end.message
    calls = message.server_tool_calls()
    assert [c.arguments for c in calls] == [
        {"query": "python 3.13 jit"},
        {"query": "jit benchmarks"},
    ]
    found, refused = calls
    assert found.details is not None
    assert isinstance(found.details, WebSearchDetails)
    assert [r.url for r in found.details.results] == [DOCS, "https://peps.python.org/pep-0744/"]
    assert not found.is_error
    assert refused.is_error
    assert "max_uses_exceeded" in refused.result
    assert found.raw[0]["type"] == "server_tool_use"
    assert found.raw[1]["type"] == "web_search_tool_result"
    kinds = [type(e).__name__ for e in outcome.tool_events]
    assert kinds == ["ToolExecutionStart", "ToolExecutionEnd"] * 2
    start = outcome.tool_events[0]
    assert isinstance(start, ToolExecutionStart)
    assert start.kind == "search"
    text = message.content[-1]
    assert isinstance(text, TextContent)
    assert text.text == "Python 3.13 adds an experimental JIT compiler."
    assert text.citations == [
        Citation(
            url=DOCS,
            title="What's New In Python 3.13",
            cited_text="an experimental just-in-time compiler",
        )
    ]
    assert message.content[0] == TextContent(text="Let me look that up.")
    assert message.stop_reason == "stop"
    sent = to_anthropic_messages([user("q"), message, user("more")])[1]["content"]
    assert [b["type"] for b in sent] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert sent[1]["input"] == {"query": "python 3.13 jit"}
    assert sent[2]["content"][0]["encrypted_content"] == "EqgfCioIARgBIiQ3YTAw"
    assert "citations" not in sent[-1]


@pytest.mark.parametrize("chunk", [None, 1, 9])
async def test_responses_search_item(chunk: int | None) -> None:
    outcome = await replay("openai-responses", chunk)
    message = outcome.end.message
    (call,) = message.server_tool_calls()
    assert call.id == "ws_67c9"
    assert call.arguments == {"query": "python 3.13 jit"}
    assert call.details is not None
    assert next(r.url for r in call.details.results) == DOCS
    assert call.api == "openai-responses"
    assert call.raw[0]["action"]["type"] == "search"
    start, end = outcome.tool_events
    assert isinstance(start, ToolExecutionStart)
    assert isinstance(end, ToolExecutionEnd)
    assert start.tool_call_id == end.tool_call_id == "ws_67c9"
    assert end.details == call.details
    (text,) = [b for b in message.content if isinstance(b, TextContent)]
    assert text.citations == [
        Citation(
            url=DOCS, title="What's New In Python 3.13", cited_text="an experimental JIT compiler"
        )
    ]
    items = to_responses_input([user("q"), message, user("more")])
    assert [i.get("type") for i in items[1:3]] == ["web_search_call", "message"]
    assert items[1] == call.raw[0]


def _body(api: str, spec: ToolSpec) -> dict[str, Any]:
    """The JSON body the real provider of ``api`` builds for a request with ``spec``."""
    provider = provider_for(api, httpx.AsyncClient())
    assert isinstance(provider, HttpProvider)
    call = provider.build_call(request(tools=[READ, spec]), "http://127.0.0.1:9")
    body: dict[str, Any] = msgspec.json.decode(call.body)
    return body


def test_request_tool_definitions() -> None:
    anthropic = _body("anthropic", SEARCH)["tools"]
    assert anthropic[-1] == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 2,
        "allowed_domains": ["python.org"],  # the API takes one list: the allowed one wins
    }
    assert [t.get("name") for t in anthropic] == ["read", "web_search"]
    allowed_only = ToolSpec("web_search", "", {}, ServerSearch(allowed_domains=("python.org",)))
    responses = _body("openai-responses", allowed_only)
    assert responses["tools"][-1] == {
        "type": "web_search",
        "filters": {"allowed_domains": ["python.org"]},
    }
    assert "max_tool_calls" not in responses
    blocked = _body("openai-responses", SEARCH)  # no blocked list in this API: not offered
    assert [t.get("name") for t in blocked["tools"]] == ["read"]
    chat = _body("openai", SEARCH)
    assert [t["function"]["name"] for t in chat["tools"]] == ["read"]


def test_only_the_same_format_gets_the_raw_blocks_back() -> None:
    call = ServerToolCall(
        id="ws_1",
        name="web_search",
        api="openai-responses",
        raw=[{"type": "web_search_call", "id": "ws_1"}],
    )
    reply = AssistantMessage(
        id="m", content=[call, TextContent(text="ok")], provider="p", model="m"
    )
    sent = to_anthropic_messages([user("q"), reply, user("more")])[1]["content"]
    assert sent == [{"type": "text", "text": "ok"}]
