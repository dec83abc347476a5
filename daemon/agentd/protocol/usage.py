"""Token counts and cost: :class:`Usage` (a leaf module, so that both the conversation
content and the tool details can use it; :mod:`agentd.protocol.content` re-exports it)."""

from __future__ import annotations

from agentd.protocol.base import Wire


class Usage(Wire):
    """Token counts and cost (USD) of one or more LLM calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0

    def add(self, other: Usage) -> Usage:
        """Return the sum of two usages (neither is modified)."""
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost=self.cost + other.cost,
        )


__all__ = ["Usage"]
