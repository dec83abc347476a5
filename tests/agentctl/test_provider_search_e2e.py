"""``agentctl send`` shows a search the provider ran on its side like any ``web_search`` call:
the shared daemon's Anthropic provider talks to the mock LLM over real HTTP, which scripts two
server-side searches (one past ``max_uses``) and a cited answer."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator

import pytest

from agentd.mockllm import MockLLMServer
from agentd.mockllm.scenarios import BUILT_IN, parse_scenarios
from tests.agentctl.harness import Sandbox
from tests.documents.test_provider_search_e2e import CONFIG, SCENARIO
from tests.harness import scaled

pytestmark = pytest.mark.e2e


@pytest.fixture
def llm() -> Iterator[MockLLMServer]:
    """The mock LLM on its own loop in a thread (agentctl runs as a subprocess)."""
    builtin = json.loads(BUILT_IN.read_text())
    server = MockLLMServer(parse_scenarios({**builtin, "scenarios": [SCENARIO]}))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(scaled(30))
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(scaled(30))
        loop.call_soon_threadsafe(loop.stop)
        thread.join(scaled(10))
        loop.close()


def test_send_shows_the_provider_search(sandbox: Sandbox, llm: MockLLMServer) -> None:
    sandbox.user_config(CONFIG.format(api="anthropic", url=llm.url))
    result = sandbox.run("send", "--provider", "p", "what is new in python 3.13?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Python 3.13 has a new interactive interpreter."
    lines = [line for line in result.stderr.splitlines() if "web_search" in line]
    assert len(lines) == 2, result.stderr
    assert "python 3.13 what's new" in lines[0]
    assert "1 result · p" in lines[0]
    assert "✗" in lines[1] or "failed" in lines[1]
    session = re.search(r"session (\S+)", result.stderr.splitlines()[-1])
    assert session is not None, result.stderr
    shown = sandbox.run("sessions", "show", session.group(1))
    assert shown.returncode == 0, shown.stderr
    calls = [line for line in shown.stdout.splitlines() if "web_search" in line]
    assert len(calls) == 2, shown.stdout
    assert "python 3.13 what's new" in calls[0]
    assert calls[1].startswith("✗")
