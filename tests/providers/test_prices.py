"""Model price lookup and cost."""

from __future__ import annotations

import pytest

from agentd.config.prices import Price, context_window, find_price, merged_prices, usage_cost
from agentd.protocol.content import Usage


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("openai/gpt-4.1-mini", "gpt-4.1-mini"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
    ],
)
def test_lookup_by_name_prefix_and_vendor(model: str, expected: str) -> None:
    """Exact, vendor-prefixed and dated names find the most specific entry."""
    assert find_price(model) == find_price(expected)
    assert find_price(model) is not None


def test_unknown_model_costs_nothing() -> None:
    """No entry: no price, zero cost."""
    assert find_price("llama3") is None
    assert find_price("gpt-4oo") is None
    assert usage_cost(Usage(input_tokens=1000), None) == 0.0


def test_cost_counts_every_kind_of_token() -> None:
    """Cost is per million tokens of each kind."""
    usage = Usage(input_tokens=1_000_000, output_tokens=500_000, cache_read_tokens=2_000_000)
    price = Price(input=2.0, output=8.0, cache_read=0.5, cache_write=10.0)
    assert usage_cost(usage, price) == pytest.approx(2.0 + 4.0 + 1.0)


def test_overrides_win_over_builtins() -> None:
    """A configured entry replaces the built-in one and adds new models."""
    table = merged_prices({"gpt-4o": Price(1, 1), "house": Price(0.1, 0.1)})
    assert find_price("gpt-4o", table) == Price(1, 1)
    assert find_price("house-v2", table) == Price(0.1, 0.1)
    assert find_price("gpt-4o-mini", table) == find_price("gpt-4o-mini")


def test_context_windows() -> None:
    """Known families have a context window; others none."""
    assert context_window("claude-haiku-4-5") == 200_000
    assert context_window("gpt-4.1-nano") == 1_047_576
    assert context_window("mystery") is None
