"""What a real daemon sends to the LLM: keys, images, system prompts, in both wire formats.

The mock LLM runs in the test process (a real HTTP server on loopback) so that the requests
the daemon made can be read back from it.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentd.mockllm import MockLLMServer
from tests.harness import Home, new_session, run, scaled, start_run, stdio_client, wait_until_async

pytestmark = pytest.mark.e2e

PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n fake image bytes").decode()
PROVIDERS = """
[providers.oai]
api = "openai"
base_url = "{url}"
models = ["mock-model"]
api_key_env = "OAI_TEST_KEY"

[providers.ant]
api = "anthropic"
base_url = "{url}"
models = ["mock-model"]
"""


@pytest.fixture
async def llm(home: Home) -> AsyncIterator[MockLLMServer]:
    """A mock LLM the project's config points two providers at (OpenAI and Anthropic)."""
    async with MockLLMServer() as server:
        home.project_config(tables=PROVIDERS.format(url=server.url))
        home.env["OAI_TEST_KEY"] = "oai-paired-key-123"
        yield server


async def prompt_once(home: Home, text: str, images: list[Any] = (), **params: Any) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home, **params)
        if images:
            await client.call("session/prompt", {"sessionId": sid, "text": text, "images": images})
        else:
            result, _ = await run(client, sid, text)
            assert result["stopReason"] == "end_turn"


async def test_a_key_is_sent_only_to_its_own_endpoint(home: Home, llm: MockLLMServer) -> None:
    """The provider's paired key goes to its base URL; an explicit other baseUrl gets none."""
    home.env["OPENAI_API_KEY"] = "sk-environment-key-000000"
    await prompt_once(home, "how are you", provider="oai")
    assert llm.request_headers[-1]["authorization"] == "Bearer oai-paired-key-123"
    await prompt_once(home, "how are you", provider="openai", baseUrl=llm.url)
    assert "authorization" not in llm.request_headers[-1]
    other = MockLLMServer()
    async with other:
        await prompt_once(home, "how are you", provider="oai", baseUrl=other.url)
    assert "authorization" not in other.request_headers[-1]


@pytest.mark.parametrize("provider", ["oai", "ant"])
async def test_prompt_images_reach_the_model(home: Home, llm: MockLLMServer, provider: str) -> None:
    """Images given to session/prompt arrive in the provider's own image format."""
    image = {"type": "image", "data": PIXEL, "mimeType": "image/png"}
    await prompt_once(home, "how are you", [image], provider=provider)
    last_user = [m for m in llm.requests[-1]["messages"] if m["role"] == "user"][-1]
    parts = last_user["content"]
    assert {"type": "text", "text": "how are you"} in [
        {k: v for k, v in p.items() if k != "cache_control"} for p in parts
    ]
    if provider == "oai":
        assert {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{PIXEL}"},
        } in parts
    else:
        source = {"type": "base64", "media_type": "image/png", "data": PIXEL}
        assert any(p["type"] == "image" and p["source"] == source for p in parts)


@pytest.mark.parametrize("provider", ["oai", "ant"])
async def test_system_prompt_from_the_config_file_and_the_session(
    home: Home, llm: MockLLMServer, provider: str
) -> None:
    """``system_prompt_file`` replaces the built-in instructions; session/new's beats it."""

    def system() -> str:
        body = llm.requests[-1]
        if provider == "ant":
            return str(body["system"][0]["text"])
        assert body["messages"][0]["role"] == "system"
        return str(body["messages"][0]["content"])

    (home.project / "AGENTS.md").write_text("Run the linter first.\n")
    await prompt_once(home, "how are you", provider=provider)
    assert system().startswith("You are a coding agent")
    (home.project / "prompt.md").write_text("You answer in haiku.\n")
    home.project_config(top='system_prompt_file = "prompt.md"\n')
    await prompt_once(home, "how are you", provider=provider)
    assert system().startswith("You answer in haiku.")
    assert "Run the linter first." in system()
    await prompt_once(home, "how are you", provider=provider, systemPrompt="You are a release bot.")
    assert system().startswith("You are a release bot.")
    assert "You answer in haiku." not in system()


@pytest.mark.parametrize("provider", ["oai", "ant"])
async def test_cancel_closes_the_http_stream(home: Home, llm: MockLLMServer, provider: str) -> None:
    """session/cancel mid-reply drops the daemon's connection: the server stops streaming."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home, provider=provider)
        _, prompt = await start_run(client, sid, "be slow", until="message_update")
        assert llm.active_streams == 1
        await client.call("session/cancel", {"sessionId": sid})
        assert (await asyncio.wait_for(prompt, scaled(5)))["stopReason"] == "cancelled"
        await wait_until_async(lambda: llm.active_streams == 0, 5, "the stream to close")
