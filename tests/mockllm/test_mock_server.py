"""The mock LLM server over real HTTP: both wire formats, steps, failures, repeat."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import parse_scenarios
from agentd.providers.sse import SSEDecoder
from tests.harness import scaled

SCENARIOS = parse_scenarios(
    {
        "scenarios": [
            {
                "name": "two-steps",
                "trigger": "Do Two",
                "steps": [
                    {
                        "response": {
                            "content": "Step zero text.",
                            "tool_calls": [
                                {
                                    "id": "call_1",
                                    "function": {
                                        "name": "bash",
                                        "arguments": '{"command": "echo one two three"}',
                                    },
                                }
                            ],
                        },
                        "usage": {"input_tokens": 11, "output_tokens": 22, "cache_read_tokens": 3},
                    },
                    {"response": {"content": "Final words."}},
                ],
            },
            {
                "name": "looping",
                "trigger": "loop",
                "repeat": True,
                "steps": [
                    {
                        "response": {
                            "content": "again",
                            "tool_calls": [{"id": "c", "function": {"name": "ls"}}],
                        }
                    }
                ],
            },
            {
                "name": "flaky",
                "trigger": "flaky",
                "fail": [{"status": 429, "retry_after": 1.5}, {"status": 503}],
                "steps": [{"response": {"content": "fine now"}}],
            },
            {
                "name": "broken",
                "trigger": "broken",
                "fail": [{"status": 500, "forever": True, "message": "kaput"}],
                "steps": [{"response": {"content": "never"}}],
            },
            {
                "name": "cut",
                "trigger": "cut",
                "steps": [
                    {"response": {"content": "0123456789" * 5}, "truncate": True, "chunk_size": 5}
                ],
            },
        ],
        "default_response": {"content": "No idea."},
    }
)


@pytest.fixture
async def server() -> AsyncIterator[MockLLMServer]:
    async with MockLLMServer(SCENARIOS) as running:
        yield running


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def openai_body(*messages: dict[str, Any], stream: bool = True) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": list(messages),
        "stream": stream,
        "stream_options": {"include_usage": True},
    }


def anthropic_body(*messages: dict[str, Any], stream: bool = True) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 100, "messages": list(messages), "stream": stream}


async def events(http: httpx.AsyncClient, url: str, body: dict[str, Any]) -> list[Any]:
    """POST and decode the SSE reply into JSON payloads ("[DONE]" kept as a string)."""
    decoder = SSEDecoder()
    payloads: list[Any] = []
    async with http.stream("POST", url, json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        async for chunk in response.aiter_bytes():
            for event in decoder.feed(chunk):
                payloads.append(
                    event.data if event.data == "[DONE]" else msgspec.json.decode(event.data)
                )
    return payloads


def deltas(payloads: list[Any], key: str) -> list[Any]:
    return [
        p["choices"][0]["delta"][key]
        for p in payloads
        if isinstance(p, dict) and p.get("choices") and key in p["choices"][0]["delta"]
    ]


async def test_openai_stream_chunks_text_and_arguments(
    server: MockLLMServer, http: httpx.AsyncClient
) -> None:
    """Text in 3-8 character pieces, tool arguments over several chunks, usage, then [DONE]."""
    payloads = await events(
        http, server.url + "/chat/completions", openai_body({"role": "user", "content": "do two"})
    )
    texts = [t for t in deltas(payloads, "content") if t]
    assert "".join(texts) == "Step zero text."
    assert all(3 <= len(t) <= 8 for t in texts[:-1])
    calls = deltas(payloads, "tool_calls")
    assert calls[0][0]["id"] == "call_1"
    assert calls[0][0]["function"]["name"] == "bash"
    pieces = [c[0]["function"]["arguments"] for c in calls[1:]]
    assert len(pieces) > 2
    assert "".join(pieces) == '{"command": "echo one two three"}'
    assert payloads[-3]["choices"][0]["finish_reason"] == "tool_calls"
    assert payloads[-2]["usage"]["prompt_tokens"] == 14
    assert payloads[-2]["usage"]["prompt_tokens_details"] == {"cached_tokens": 3}
    assert payloads[-1] == "[DONE]"


async def test_step_follows_tool_results(server: MockLLMServer, http: httpx.AsyncClient) -> None:
    """One tool result after the last user message selects step 1; past the end, text only."""
    first = {"role": "user", "content": [{"type": "text", "text": "please DO TWO things"}]}
    call = {"role": "assistant", "content": None, "tool_calls": []}
    result = {"role": "tool", "tool_call_id": "call_1", "content": "ok"}
    url = server.url + "/chat/completions"
    step1 = await http.post(url, json=openai_body(first, call, result, stream=False))
    message = step1.json()["choices"][0]["message"]
    assert message["content"] == "Final words."
    assert "tool_calls" not in message
    later = await http.post(
        url, json=openai_body(first, call, result, call, result, call, result, stream=False)
    )
    assert later.json()["choices"][0]["message"]["content"] == "Final words."
    restart = await http.post(
        url,
        json=openai_body(first, call, result, {"role": "user", "content": "do two"}, stream=False),
    )
    assert restart.json()["choices"][0]["finish_reason"] == "tool_calls"


async def test_openai_non_stream(server: MockLLMServer, http: httpx.AsyncClient) -> None:
    """A chat.completion with tool calls and usage overrides."""
    reply = await http.post(
        server.url + "/chat/completions",
        json=openai_body({"role": "user", "content": "do two"}, stream=False),
    )
    body = reply.json()
    assert body["object"] == "chat.completion"
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert (
        choice["message"]["tool_calls"][0]["function"]["arguments"]
        == '{"command": "echo one two three"}'
    )
    assert (body["usage"]["prompt_tokens"], body["usage"]["completion_tokens"]) == (14, 22)


async def test_anthropic_stream(server: MockLLMServer, http: httpx.AsyncClient) -> None:
    """message_start, text and tool_use blocks with deltas, message_delta, message_stop."""
    url = server.url.removesuffix("/v1") + "/v1/messages"
    payloads = await events(http, url, anthropic_body({"role": "user", "content": "do two"}))
    kinds = [p["type"] for p in payloads]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert "ping" in kinds
    text = "".join(
        p["delta"]["text"]
        for p in payloads
        if p["type"] == "content_block_delta" and p["delta"]["type"] == "text_delta"
    )
    assert text == "Step zero text."
    tool_start = next(
        p
        for p in payloads
        if p["type"] == "content_block_start" and p["content_block"]["type"] == "tool_use"
    )
    assert tool_start["content_block"]["name"] == "bash"
    pieces = [
        p["delta"]["partial_json"]
        for p in payloads
        if p["type"] == "content_block_delta" and p["delta"]["type"] == "input_json_delta"
    ]
    assert len(pieces) > 2
    assert payloads[-2]["delta"]["stop_reason"] == "tool_use"
    assert payloads[-2]["usage"]["output_tokens"] == 22


async def test_anthropic_steps_count_tool_result_blocks(
    server: MockLLMServer, http: httpx.AsyncClient
) -> None:
    """tool_result blocks after the last user text select the step (non-stream reply)."""
    messages = [
        {"role": "user", "content": "do two"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_1", "name": "bash", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "ok"}],
        },
    ]
    reply = await http.post(server.url + "/messages", json=anthropic_body(*messages, stream=False))
    body = reply.json()
    assert body["type"] == "message"
    assert body["content"] == [{"type": "text", "text": "Final words."}]
    assert body["stop_reason"] == "end_turn"


async def test_repeat_loops_forever(server: MockLLMServer, http: httpx.AsyncClient) -> None:
    """A repeating scenario keeps calling tools however many results came back."""
    results = [{"role": "tool", "tool_call_id": "c", "content": "x"}] * 57
    reply = await http.post(
        server.url + "/chat/completions",
        json=openai_body({"role": "user", "content": "loop"}, *results, stream=False),
    )
    assert reply.json()["choices"][0]["finish_reason"] == "tool_calls"


async def test_failures_then_success_and_reset(
    server: MockLLMServer, http: httpx.AsyncClient
) -> None:
    """``fail`` entries answer the first requests (with Retry-After), then the steps do."""
    url = server.url + "/chat/completions"
    body = openai_body({"role": "user", "content": "flaky"}, stream=False)
    first, second, third = [await http.post(url, json=body) for _ in range(3)]
    assert (first.status_code, first.headers["retry-after"]) == (429, "1.5")
    assert first.json()["error"]["type"] == "rate_limit_exceeded"
    assert second.status_code == 503
    assert third.json()["choices"][0]["message"]["content"] == "fine now"
    server.reset()
    assert (await http.post(url, json=body)).status_code == 429


async def test_forever_failure(server: MockLLMServer, http: httpx.AsyncClient) -> None:
    """A ``forever`` failure answers every request, in the wire format's error shape."""
    for _ in range(3):
        reply = await http.post(
            server.url + "/messages", json=anthropic_body({"role": "user", "content": "broken"})
        )
        assert reply.status_code == 500
        assert reply.json() == {"type": "error", "error": {"type": "api_error", "message": "kaput"}}


async def test_truncated_stream_has_no_finish(
    server: MockLLMServer, http: httpx.AsyncClient
) -> None:
    """``truncate`` cuts the reply halfway: no finish reason, no [DONE]."""
    payloads = await events(
        http, server.url + "/chat/completions", openai_body({"role": "user", "content": "cut"})
    )
    assert "[DONE]" not in payloads
    assert all(p["choices"][0]["finish_reason"] is None for p in payloads)
    assert 0 < len(deltas(payloads, "content")) < 11


async def test_default_response_and_models(server: MockLLMServer, http: httpx.AsyncClient) -> None:
    """Unmatched prompts get the default response; /v1/models lists the mock model."""
    reply = await http.post(
        server.url + "/chat/completions",
        json=openai_body({"role": "user", "content": "??"}, stream=False),
    )
    assert reply.json()["choices"][0]["message"]["content"] == "No idea."
    models = (await http.get(server.url + "/models")).json()
    assert models["data"][0]["id"] == "mock-model"


async def test_bad_requests(server: MockLLMServer, http: httpx.AsyncClient) -> None:
    """Unknown routes are 404; a body that is not a JSON object is 400."""
    assert (await http.get(server.url + "/nothing")).status_code == 404
    reply = await http.post(server.url + "/chat/completions", content=b"{not json")
    assert reply.status_code == 400
    assert "not JSON" in reply.json()["error"]["message"]
    reply = await http.post(server.url + "/chat/completions", json=[1, 2])
    assert reply.status_code == 400


async def raw_exchange(server: MockLLMServer, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(data)
    await writer.drain()
    received = await asyncio.wait_for(reader.read(), scaled(5))
    writer.close()
    await writer.wait_closed()
    return received


async def test_keep_alive_then_close(server: MockLLMServer) -> None:
    """Two requests on one connection are both answered; ``Connection: close`` ends it."""
    request = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
    closing = b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    received = await raw_exchange(server, request + closing)
    assert received.count(b"HTTP/1.1 200 OK") == 2


async def test_malformed_request_line(server: MockLLMServer) -> None:
    """Garbage gets a 400 and the connection is closed."""
    received = await raw_exchange(server, b"NONSENSE\r\n\r\n")
    assert received.startswith(b"HTTP/1.1 400 Bad Request")


async def test_delays_are_applied(http: httpx.AsyncClient) -> None:
    """delay_ms and chunk_delay_ms slow the reply (the stream still completes)."""
    slow = parse_scenarios(
        {
            "scenarios": [
                {
                    "name": "s",
                    "trigger": "s",
                    "steps": [
                        {
                            "response": {"content": "abcdefghij"},
                            "delay_ms": 50,
                            "chunk_delay_ms": 20,
                            "chunk_size": 5,
                        }
                    ],
                }
            ]
        }
    )
    async with MockLLMServer(slow) as server:
        loop = asyncio.get_running_loop()
        started = loop.time()
        payloads = await events(
            http, server.url + "/chat/completions", openai_body({"role": "user", "content": "s"})
        )
        elapsed = loop.time() - started
    assert deltas(payloads, "content")[1:] == ["abcde", "fghij"]
    assert elapsed >= 0.05 + 4 * 0.02


def responses_body(*items: dict[str, Any], stream: bool = True) -> dict[str, Any]:
    return {"model": "m", "stream": stream, "store": False, "input": list(items)}


async def test_responses_stream_items_and_usage(
    server: MockLLMServer, http: httpx.AsyncClient
) -> None:
    """The Responses stream: message then function call items, deltas, a completed usage."""
    user = {"role": "user", "content": [{"type": "input_text", "text": "do two"}]}
    got = await events(http, server.url + "/responses", responses_body(user))
    kinds = [e["type"] for e in got]
    assert kinds[0] == "response.created"
    assert kinds[-1] == "response.completed"
    text = "".join(e["delta"] for e in got if e["type"] == "response.output_text.delta")
    assert text == "Step zero text."
    added = [e["item"] for e in got if e["type"] == "response.output_item.added"]
    assert [item["type"] for item in added] == ["message", "function_call"]
    assert added[1]["call_id"] == "call_1"
    arguments = "".join(
        e["delta"] for e in got if e["type"] == "response.function_call_arguments.delta"
    )
    assert msgspec.json.decode(arguments) == {"command": "echo one two three"}
    usage = got[-1]["response"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (14, 22)
    assert usage["input_tokens_details"]["cached_tokens"] == 3


async def test_responses_step_follows_function_outputs(
    server: MockLLMServer, http: httpx.AsyncClient
) -> None:
    """function_call_output items after the user message pick the next step (not streamed)."""
    user = {"role": "user", "content": "do two"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "one two three"}
    reply = await http.post(
        server.url + "/responses", json=responses_body(user, output, stream=False)
    )
    assert reply.status_code == 200
    items = reply.json()["output"]
    assert items[-1]["content"][0]["text"] == "Final words."
    assert reply.json()["status"] == "completed"
