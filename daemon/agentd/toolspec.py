"""How a tool is described to the model: the one type both the tools and the providers use.

A neutral module (it imports nothing of agentd), so the providers need not import the tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolSpec:
    """A tool as described to the LLM: name, description and JSON Schema of its params."""

    name: str
    description: str
    parameters: dict[str, Any]
