"""Model prices (USD per million tokens) and context windows, for cost accounting.

The built-in table covers a handful of common OpenAI and Anthropic models; a config file adds
or replaces entries with ``[prices."model-name"] input = …, output = …`` (optionally
``cache_read`` and ``cache_write``). A model name is looked up as given, then without a
``vendor/`` prefix (``openai/gpt-4o``, ``azure/gpt-4o``), then by the longest table key that
is a dash-separated prefix of it (``gpt-4o-2024-08-06`` → ``gpt-4o``, while ``gpt-4o-mini``
keeps its own entry). An unknown model costs 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import msgspec

from agentd.protocol.content import Usage

_T = TypeVar("_T")
_MILLION = 1_000_000


class Price(msgspec.Struct, frozen=True):
    """USD per million tokens of each kind."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0


BUILTIN_PRICES: Mapping[str, Price] = {
    "gpt-4o": Price(2.50, 10.00, cache_read=1.25),
    "gpt-4o-mini": Price(0.15, 0.60, cache_read=0.075),
    "gpt-4.1": Price(2.00, 8.00, cache_read=0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, cache_read=0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, cache_read=0.025),
    "gpt-5": Price(1.25, 10.00, cache_read=0.125),
    "gpt-5-mini": Price(0.25, 2.00, cache_read=0.025),
    "gpt-5-nano": Price(0.05, 0.40, cache_read=0.005),
    "o3": Price(2.00, 8.00, cache_read=0.50),
    "o4-mini": Price(1.10, 4.40, cache_read=0.275),
    "claude-opus-4": Price(15.00, 75.00, cache_read=1.50, cache_write=18.75),
    "claude-opus-4-1": Price(15.00, 75.00, cache_read=1.50, cache_write=18.75),
    "claude-opus-4-5": Price(5.00, 25.00, cache_read=0.50, cache_write=6.25),
    "claude-sonnet-4": Price(3.00, 15.00, cache_read=0.30, cache_write=3.75),
    "claude-sonnet-4-5": Price(3.00, 15.00, cache_read=0.30, cache_write=3.75),
    "claude-3-7-sonnet": Price(3.00, 15.00, cache_read=0.30, cache_write=3.75),
    "claude-3-5-sonnet": Price(3.00, 15.00, cache_read=0.30, cache_write=3.75),
    "claude-haiku-4-5": Price(1.00, 5.00, cache_read=0.10, cache_write=1.25),
    "claude-3-5-haiku": Price(0.80, 4.00, cache_read=0.08, cache_write=1.00),
}
"""Prices as published by the vendors for their APIs (standard tier)."""

CONTEXT_WINDOWS: Mapping[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude": 200_000,
}
"""Context windows in tokens, looked up like prices (``claude`` covers every Claude model)."""


def lookup(model: str, table: Mapping[str, _T]) -> _T | None:
    """The entry for ``model``: exact, then without a vendor prefix, then longest dash-prefix."""
    for name in (model, model.rpartition("/")[2]):
        if name in table:
            return table[name]
    name = model.rpartition("/")[2]
    best = max((key for key in table if name.startswith(key + "-")), key=len, default=None)
    return None if best is None else table[best]


def merged_prices(overrides: Mapping[str, Price]) -> dict[str, Price]:
    """The built-in table with configured entries added or replaced."""
    return {**BUILTIN_PRICES, **overrides}


def find_price(model: str, table: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``model`` in ``table`` (default: the built-in table), or None."""
    return lookup(model, BUILTIN_PRICES if table is None else table)


def context_window(model: str) -> int | None:
    """The built-in context window of ``model``, if known."""
    return lookup(model, CONTEXT_WINDOWS)


def usage_cost(usage: Usage, price: Price | None) -> float:
    """The USD cost of ``usage`` at ``price`` (0 for an unknown price)."""
    if price is None:
        return 0.0
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    )
    return total / _MILLION
