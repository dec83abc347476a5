"""The client library over TCP: the token from the daemon's token file is required."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from agentctl.client import connect_tcp
from agentd.errors import InvalidParams, Unauthorized
from agentd.protocol.methods import PromptParams, SessionNewParams
from tests.agentctl.harness import Sandbox
from tests.harness import stop

pytestmark = pytest.mark.e2e


@pytest.fixture
def tcp_daemon(sandbox: Sandbox) -> Iterator[tuple[int, str]]:
    """``agentd serve --tcp`` on a loopback port of its choosing; yields (port, token)."""
    process, port = sandbox.start_tcp_daemon()
    try:
        yield port, sandbox.tcp_token()
    finally:
        stop(process, timeout=10)


def test_tcp_with_the_token_runs_a_prompt(tcp_daemon: tuple[int, str], sandbox: Sandbox) -> None:
    """With the right token the client works as over the Unix socket."""
    port, token = tcp_daemon

    async def scenario() -> str:
        async with await connect_tcp("127.0.0.1", port, token) as client:
            new = SessionNewParams(cwd=str(sandbox.project), provider="mock")
            info = await client.sessions.create(new)
            prompt = PromptParams(session_id=info.session_id, text="how are you")
            return (await client.sessions.prompt(prompt)).stop_reason

    assert asyncio.run(scenario()) == "end_turn"


def test_tcp_with_a_wrong_token_is_refused(tcp_daemon: tuple[int, str]) -> None:
    """A wrong token fails initialize with Unauthorized."""
    port, _ = tcp_daemon

    async def scenario() -> None:
        await connect_tcp("127.0.0.1", port, "not-the-token-at-all")

    with pytest.raises(Unauthorized):
        asyncio.run(scenario())


def test_tcp_refuses_provider_variables(tcp_daemon: tuple[int, str], sandbox: Sandbox) -> None:
    """Keys never travel over TCP: ``providerEnv`` is refused there (over the Unix socket the
    shared daemon takes it, see test_fresh_env_e2e)."""
    port, token = tcp_daemon

    async def scenario() -> None:
        async with await connect_tcp("127.0.0.1", port, token) as client:
            assert client.provider_env is None  # the library sends none over TCP
            client.provider_env = {"OPENAI_API_KEY": "sk-must-not-travel-1234"}
            await client.sessions.create(
                SessionNewParams(cwd=str(sandbox.project), provider="mock")
            )

    with pytest.raises(InvalidParams, match="Unix socket or stdio only"):
        asyncio.run(scenario())
