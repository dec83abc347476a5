"""The in-process mock LLM (``--provider mock`` in the daemon): the same replies as over HTTP,
through an in-process client (a ``ProviderHttp``), with no port and no httpx."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import parse_scenarios
from agentd.mockllm.transport import MockTransport, mock_scenarios
from agentd.providers.http_types import read_all
from agentd.providers.sse import SSEDecoder
from tests.mockllm.test_mock_server import SCENARIOS, anthropic_body, events, openai_body

URL = "http://mock.agentd.invalid/v1"


def _without_ids(value: object) -> object:
    """``value`` without its generated ids and creation times (they differ per reply)."""
    if isinstance(value, dict):
        return {k: _without_ids(v) for k, v in value.items() if k not in ("id", "created")}
    if isinstance(value, list):
        return [_without_ids(item) for item in value]
    return value


@pytest.fixture
async def in_process() -> AsyncIterator[MockTransport]:
    client = MockTransport(server=MockLLMServer(SCENARIOS))
    yield client
    await client.aclose()


async def in_process_events(client: MockTransport, url: str, body: object) -> list[Any]:
    """POST ``body`` in process and decode the SSE reply (as ``events`` does over HTTP)."""
    response = await client.open("POST", url, body=msgspec.json.encode(body))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    decoder = SSEDecoder()
    payloads: list[Any] = []
    for event in decoder.feed(await read_all(response)):
        payloads.append(event.data if event.data == "[DONE]" else msgspec.json.decode(event.data))
    return payloads


async def request_in_process(
    client: MockTransport, method: str, url: str, body: bytes = b""
) -> tuple[int, bytes]:
    response = await client.open(method, url, body=body)
    return response.status_code, await read_all(response)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/chat/completions", openai_body({"role": "user", "content": "do two"})),
        ("/messages", anthropic_body({"role": "user", "content": "do two"})),
    ],
)
async def test_streams_the_same_events_as_the_http_server(
    in_process: MockTransport, path: str, body: dict[str, object]
) -> None:
    async with MockLLMServer(SCENARIOS) as server, httpx.AsyncClient() as http:
        over_http = await events(http, server.url + path, body)
    got = await in_process_events(in_process, URL + path, body)
    assert _without_ids(got) == _without_ids(over_http)
    assert len(over_http) > 3


async def test_errors_and_plain_replies_keep_their_status(in_process: MockTransport) -> None:
    status, missing = await request_in_process(in_process, "GET", URL + "/nowhere")
    assert status == 404
    assert "no route" in msgspec.json.decode(missing)["error"]["message"]
    body = openai_body({"role": "user", "content": "anything"}, stream=False)
    _, reply = await request_in_process(
        in_process, "POST", URL + "/chat/completions", msgspec.json.encode(body)
    )
    assert msgspec.json.decode(reply)["choices"][0]["message"]["content"] == "No idea."


async def test_a_reader_that_stops_ends_the_reply() -> None:
    """Closing a response mid-stream cancels the handler (no stream is left running)."""
    slow = parse_scenarios(
        {
            "scenarios": [
                {
                    "name": "s",
                    "trigger": "s",
                    "steps": [
                        {"response": {"content": "x" * 200}, "chunk_size": 1, "chunk_delay_ms": 5}
                    ],
                }
            ]
        }
    )
    server = MockLLMServer(slow)
    client = MockTransport(server=server)
    body = msgspec.json.encode(openai_body({"role": "user", "content": "s"}))
    response = await client.open("POST", URL + "/chat/completions", body=body)
    async for _chunk in response.aiter_bytes():
        assert server.active_streams == 1
        break
    await response.aclose()
    await asyncio.sleep(0)
    assert server.active_streams == 0


def test_the_scenarios_variable_replaces_the_built_in_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"scenarios": [], "default_response": {"content": "from the file"}}')
    builtin = mock_scenarios()  # read before the variable names a file: it is not kept
    monkeypatch.setenv("AGENTD_MOCK_SCENARIOS", str(path))
    assert mock_scenarios().default_response.content == "from the file"
    monkeypatch.delenv("AGENTD_MOCK_SCENARIOS")
    assert mock_scenarios() is builtin


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/chat/completions", openai_body({"role": "user", "content": "do two"})),
        ("/chat/completions", {**openai_body({"role": "user", "content": "hi"}), "tools": []}),
        ("/messages", anthropic_body({"role": "user", "content": "do two"})),
    ],
)
async def test_a_server_keeping_no_requests_answers_the_same(
    path: str, body: dict[str, object]
) -> None:
    """The daemon's mock keeps no request, so it decodes only the keys a format reads: the
    replies are the same, the usage chunk included; a body that is no object is refused."""
    async with MockLLMServer(SCENARIOS) as server, httpx.AsyncClient() as http:
        over_http = await events(http, server.url + path, body)
    kept_none = MockTransport(server=MockLLMServer(SCENARIOS, keep_requests=0))
    got = await in_process_events(kept_none, URL + path, body)
    assert _without_ids(got) == _without_ids(over_http)
    status, refused = await request_in_process(kept_none, "POST", URL + path, b"[1]")
    assert status == 400
    assert b"must be a JSON object" in refused
