"""The in-process mock LLM (``--provider mock`` in the daemon): the same replies as over HTTP,
through an httpx transport, with no port."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import parse_scenarios
from agentd.mockllm.transport import MockTransport, mock_scenarios
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
async def in_process() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=MockTransport(server=MockLLMServer(SCENARIOS))
    ) as client:
        yield client


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/chat/completions", openai_body({"role": "user", "content": "do two"})),
        ("/messages", anthropic_body({"role": "user", "content": "do two"})),
    ],
)
async def test_streams_the_same_events_as_the_http_server(
    in_process: httpx.AsyncClient, path: str, body: dict[str, object]
) -> None:
    async with MockLLMServer(SCENARIOS) as server, httpx.AsyncClient() as http:
        over_http = await events(http, server.url + path, body)
    in_process_events = await events(in_process, URL + path, body)
    assert _without_ids(in_process_events) == _without_ids(over_http)
    assert len(over_http) > 3


async def test_errors_and_plain_replies_keep_their_status(in_process: httpx.AsyncClient) -> None:
    missing = await in_process.get(URL + "/nowhere")
    assert missing.status_code == 404
    assert "no route" in missing.json()["error"]["message"]
    body = openai_body({"role": "user", "content": "anything"}, stream=False)
    reply = await in_process.post(URL + "/chat/completions", json=body)
    assert reply.json()["choices"][0]["message"]["content"] == "No idea."


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
    async with httpx.AsyncClient(transport=MockTransport(server=server)) as client:
        body = openai_body({"role": "user", "content": "s"})
        async with client.stream("POST", URL + "/chat/completions", json=body) as response:
            async for _chunk in response.aiter_bytes():
                assert server.active_streams == 1
                break
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
    async with httpx.AsyncClient(transport=kept_none) as client:
        assert _without_ids(await events(client, URL + path, body)) == _without_ids(over_http)
        refused = await client.post(URL + path, content=b"[1]")
    assert refused.status_code == 400
    assert "must be a JSON object" in refused.text
