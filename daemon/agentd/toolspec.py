"""How a tool is described to the model: the one type both the tools and the providers use.

A neutral module (it imports nothing of agentd), so the providers need not import the tools.
"""

from __future__ import annotations

from typing import Any

import msgspec


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool as described to the LLM: name, description and JSON Schema of its params."""

    name: str
    description: str
    parameters: dict[str, Any]
