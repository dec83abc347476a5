"""The client library over TCP: the token from the daemon's token file is required."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.client import connect_tcp
from agentd.errors import InvalidParams, Unauthorized
from tests.agentctl.harness import Sandbox
from tests.harness import start_daemon, stop

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def tcp_daemon(sandbox: Sandbox) -> Iterator[tuple[int, str]]:
    """``agentd serve --tcp`` on a free loopback port; yields (port, token)."""
    port = free_port()
    token_file = sandbox.root / "tcp.token"
    argv = sandbox.agentd("serve", "--tcp", f"127.0.0.1:{port}", "--token-file", str(token_file))
    process = start_daemon(argv, sandbox.env, sandbox.stderr, lambda: _listening(port))
    try:
        yield port, Path(token_file).read_text().strip()
    finally:
        stop(process, timeout=10)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_tcp_with_the_token_runs_a_prompt(tcp_daemon: tuple[int, str], sandbox: Sandbox) -> None:
    """With the right token the client works as over the Unix socket."""
    port, token = tcp_daemon

    async def scenario() -> str:
        async with await connect_tcp("127.0.0.1", port, token) as client:
            info = await client.new_session(str(sandbox.project), provider="mock")
            return (await client.prompt(info.session_id, "how are you")).stop_reason

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
            await client.new_session(str(sandbox.project), provider="mock")

    with pytest.raises(InvalidParams, match="Unix socket or stdio only"):
        asyncio.run(scenario())
