"""An untrusted project's ``system_prompt_file`` against a real shared daemon.

The project file may add prompt text from a file inside the project; the repository's author
chooses what that file is. A FIFO used to freeze the whole daemon (every client's
``daemon/status`` timed out) and a 20 MiB file went with every LLM request. Now only a regular
file is read, opened without blocking, capped like an AGENTS.md, and off the event loop.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.config.textfile import MAX_TEXT_BYTES
from agentd.errors import RpcError
from agentd.mockllm import MockLLMServer
from tests.harness import Home, scaled, socket_client, stop

pytestmark = pytest.mark.e2e

USER_CONFIG = """
[providers.oai]
api = "openai"
base_url = "{url}"
models = ["mock-model"]
"""


@pytest.fixture
def repo(home: Home) -> Path:
    """A cloned repository nobody trusted, whose project file names ``prompt.txt``."""
    folder = home.root / "cloned"
    (folder / ".git").mkdir(parents=True)
    (folder / ".agentd.toml").write_text('system_prompt_file = "prompt.txt"\n')
    return folder


@pytest.fixture
async def llm(home: Home) -> AsyncIterator[MockLLMServer]:
    """The mock LLM over HTTP, as the user's own provider (an untrusted file cannot pick one)."""
    async with MockLLMServer() as server:
        config = home.config_dir / "agentd" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(USER_CONFIG.format(url=server.url))
        yield server


async def test_a_fifo_is_refused_and_the_daemon_keeps_serving(home: Home, repo: Path) -> None:
    """session/new in the repository fails at once, naming the FIFO; another client's
    daemon/status is answered meanwhile, and nothing ever opened the FIFO for writing."""
    os.mkfifo(repo / "prompt.txt")
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as victim, socket_client(home) as other:
            attempt = asyncio.create_task(
                victim.call("session/new", {"cwd": str(repo), "provider": "mock"})
            )
            status = await asyncio.wait_for(other.call("daemon/status", {}), scaled(20))
            assert status["pid"] == daemon.pid
            with pytest.raises(RpcError) as failed:
                await asyncio.wait_for(attempt, scaled(20))
            assert "is not a regular file (a FIFO)" in failed.value.message
            assert "prompt.txt" in failed.value.message
            assert (await asyncio.wait_for(other.call("daemon/status", {}), scaled(20)))["pid"]
    finally:
        stop(daemon)


async def test_a_huge_prompt_file_is_capped_like_agents_md(
    home: Home, repo: Path, llm: MockLLMServer
) -> None:
    """A 20 MiB prompt file reaches the LLM as its first 64 KiB and a note that it was cut."""
    line = "Always answer in French. " * 3 + "\n"
    (repo / "prompt.txt").write_text(line * (20 * 1024 * 1024 // len(line)))
    daemon = home.start_socket_daemon()
    try:
        async with socket_client(home) as client:
            info = await client.call("session/new", {"cwd": str(repo), "provider": "oai"})
            result = await client.call(
                "session/prompt", {"sessionId": info["sessionId"], "text": "how are you"}
            )
            assert result["stopReason"] == "end_turn"
        system = llm.requests[-1]["messages"][0]["content"]
        assert "Always answer in French." in system
        assert "[… prompt.txt truncated at 64 KB]" in system
        assert len(system.encode()) < MAX_TEXT_BYTES + 16 * 1024  # the rest of the prompt
    finally:
        stop(daemon)
