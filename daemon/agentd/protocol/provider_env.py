"""Which environment variables a client sends as its provider environment.

A client on the same machine (the Unix socket or stdio, never TCP) may send its own provider
variables with ``session/new``, ``session/load``, ``session/setModel`` and ``models/list``
(``providerEnv``). The daemon then resolves the session's provider from them instead of its own
start-up environment, keeps them in memory for that session only and never writes them.
"""

from __future__ import annotations

from collections.abc import Mapping

MOCK_SCENARIOS_ENV = "AGENTD_MOCK_SCENARIOS"
"""The scenarios file of the offline ``mock`` provider: sent like a provider variable, so a
shared daemon answers each client's session from that client's file."""
PROVIDER_ENV_PREFIXES = ("LLM_", "OPENAI_", "ANTHROPIC_")
"""Variables with these prefixes configure the built-in providers."""
PROVIDER_ENV_SUFFIX = "_API_KEY"
"""Keys named by a provider table's ``api_key_env`` usually end so (``GROQ_API_KEY``)."""


def is_provider_variable(name: str) -> bool:
    """True for ``LLM_*``, ``OPENAI_*``, ``ANTHROPIC_*``, ``*_API_KEY`` and
    ``AGENTD_MOCK_SCENARIOS``."""
    return (
        name.startswith(PROVIDER_ENV_PREFIXES)
        or name.endswith(PROVIDER_ENV_SUFFIX)
        or name == MOCK_SCENARIOS_ENV
    )


def provider_variables(env: Mapping[str, str]) -> dict[str, str]:
    """The provider variables of ``env`` (empty values dropped)."""
    return {name: value for name, value in env.items() if value and is_provider_variable(name)}
