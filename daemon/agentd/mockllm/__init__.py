"""An offline, scripted LLM speaking the OpenAI and Anthropic wire formats.

Used by tests, demos and ``--provider mock`` (see README.md in this folder): over HTTP as
:class:`MockLLMServer` (``agentd mock-llm``, the provider tests), and inside the daemon as
an httpx transport (:mod:`agentd.mockllm.transport`). Set ``AGENTD_MOCK_SCENARIOS`` to a
scenarios file to replace the built-in scenarios.
"""

from __future__ import annotations

from agentd.mockllm.scenarios import ScenarioError, Scenarios, load_scenarios
from agentd.mockllm.server import MockLLMServer

__all__ = ["MockLLMServer", "ScenarioError", "Scenarios", "load_scenarios"]
