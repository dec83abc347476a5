"""An offline, scripted LLM server speaking the OpenAI and Anthropic wire formats.

Used by tests, demos and ``--provider mock`` (see README.md in this folder).
:func:`ensure_mock_server` runs one shared server inside the current event loop; set
``AGENTD_MOCK_SCENARIOS`` to a scenarios file to replace the built-in scenarios.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from agentd.mockllm.scenarios import ScenarioError, Scenarios, load_scenarios
from agentd.mockllm.server import MockLLMServer

__all__ = [
    "MockLLMServer",
    "ScenarioError",
    "Scenarios",
    "ensure_mock_server",
    "load_scenarios",
    "stop_mock_server",
]


@dataclass
class _Shared:
    loop: asyncio.AbstractEventLoop
    lock: asyncio.Lock
    server: MockLLMServer | None = None


_shared: _Shared | None = None


async def ensure_mock_server() -> str:
    """The base URL of the shared in-process mock server, started on first use.

    One server per event loop; a scenarios file named by ``AGENTD_MOCK_SCENARIOS`` replaces
    the built-in one (a bad file raises ScenarioError). Stop it with :func:`stop_mock_server`.
    """
    global _shared
    loop = asyncio.get_running_loop()
    if _shared is None or _shared.loop is not loop:
        _shared = _Shared(loop, asyncio.Lock())
    shared = _shared
    async with shared.lock:
        if shared.server is None:
            path = os.environ.get("AGENTD_MOCK_SCENARIOS")
            server = MockLLMServer(load_scenarios(Path(path) if path else None))
            await server.start()
            shared.server = server
        return shared.server.url


async def stop_mock_server() -> None:
    """Stop the shared mock server of the current event loop, if one runs."""
    global _shared
    shared, _shared = _shared, None
    running_here = shared is not None and shared.loop is asyncio.get_running_loop()
    if running_here and shared is not None and shared.server is not None:
        await shared.server.stop()
