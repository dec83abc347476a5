"""How a tool is described to the model: the one type both the tools and the providers use.

A neutral module (it imports nothing of agentd), so the providers need not import the tools.
"""

from __future__ import annotations

from typing import Any

import msgspec


class ServerSearch(msgspec.Struct, frozen=True):
    """The provider's own web search, run on its side (``[web_search] backend =
    "provider"``): at most ``max_uses`` searches a reply (None: the provider's limit), only
    results from ``allowed_domains`` / never from ``blocked_domains`` (empty: no filter)."""

    max_uses: int | None = None
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool as described to the LLM: name, description and JSON Schema of its params.

    ``server_search`` set: the tool is the provider's server-side web search. A provider
    that has one sends its own tool definition instead of the function; one that has none
    leaves the tool out (the model never hears of it)."""

    name: str
    description: str
    parameters: dict[str, Any]
    server_search: ServerSearch | None = None
