"""make_provider: the right wire format, and the in-process mock."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from agentd.config.load import MOCK_BASE_URL, ModelChoice
from agentd.mockllm.transport import MockTransport
from agentd.protocol.content import TextContent
from agentd.providers import make_provider
from agentd.providers.anthropic import AnthropicProvider
from agentd.providers.openai import OpenAIProvider
from tests.providers.replay import choice, collect, request, user


async def test_api_selects_the_provider_class() -> None:
    """api "openai" and "anthropic" give their providers, named after the provider."""
    async with httpx.AsyncClient() as http:
        openai = make_provider(choice("openai"), http)
        anthropic = make_provider(choice("anthropic"), http)
    assert isinstance(openai, OpenAIProvider)
    assert isinstance(anthropic, AnthropicProvider)
    assert (openai.name, anthropic.name) == ("openai", "anthropic")


async def test_mock_answers_through_the_in_process_transport() -> None:
    """The mock provider's requests go through the real provider code to ``MockTransport``."""
    mock = ModelChoice("mock", "openai", "mock-model", MOCK_BASE_URL, None, None)
    outcome = await collect(make_provider(mock, MockTransport()), request([user("how are you")]))
    message = outcome.end.message
    assert message.provider == "mock"
    assert message.content[0] == TextContent(
        text="I'm doing well, thank you for asking! What shall we work on?"
    )
    assert message.usage.cost == 0.0


async def test_unavailable_mock_is_an_error_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mock that cannot answer (bad scenarios file) ends the stream with an error, no raise."""
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    monkeypatch.setenv("AGENTD_MOCK_SCENARIOS", str(bad))
    mock = ModelChoice("mock", "openai", "mock-model", MOCK_BASE_URL, None, None)
    outcome = await collect(make_provider(mock, MockTransport()), request([user("hi")]))
    message = outcome.end.message
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert f"mock LLM: {bad}" in message.error_message
