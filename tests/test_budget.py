"""Run budgets: the projection of the next call, and the loop stopping before it."""

from __future__ import annotations

from typing import Any

import pytest

from agentd.agent.budget import (
    ESTIMATE_MARGIN,
    Budget,
    Ledger,
    Projection,
    project_next_call,
    total_tokens,
)
from agentd.agent.messages import estimate_tokens, user_message
from agentd.agent.run import RunRequest
from agentd.config.prices import Price
from agentd.protocol.content import AssistantMessage, TextContent, Usage, UserMessage
from agentd.protocol.events import AgentEnd, Event, TurnStart
from tests.fakes import ScriptedProvider, reply
from tests.test_agent import make_agent


def answer(usage: Usage) -> AssistantMessage:
    return AssistantMessage(
        id="a", content=[TextContent(text="ok")], provider="p", model="m", usage=usage
    )


def test_first_call_is_the_preamble_plus_every_message() -> None:
    messages = [user_message("hello " * 100)]
    projection = project_next_call(messages, preamble_tokens=50)
    expected = int((50 + estimate_tokens(messages)) * ESTIMATE_MARGIN)
    assert projection == Projection(0, expected, 0)


def test_later_calls_build_on_the_last_reported_usage() -> None:
    """The last reply's context and output, plus what came after it; cache stays cached."""
    usage = Usage(input_tokens=100, output_tokens=40, cache_read_tokens=900)
    later = user_message("and now the tests")
    projection = project_next_call([user_message("a"), answer(usage), later], 50)
    added = int(estimate_tokens([later]) * ESTIMATE_MARGIN)
    assert projection == Projection(900, 100 + 40 + added, 40)
    assert projection.tokens == 900 + 140 + added + 40


def test_cost_projection_uses_each_price() -> None:
    price = Price(input=3.0, output=15.0, cache_read=0.3)
    assert Projection(1_000_000, 1_000_000, 1_000_000).cost(price) == pytest.approx(18.3)
    no_cache_price = Price(input=3.0, output=15.0)
    assert Projection(1_000_000, 0, 0).cost(no_cache_price) == pytest.approx(3.0)


def test_refusal_names_the_figures() -> None:
    spent = Usage(input_tokens=700, output_tokens=200, cost=0.5)
    assert total_tokens(spent) == 900
    budget = Budget(max_tokens=1000)
    why = budget.refusal(spent, Projection(0, 150, 0), None)
    assert why is not None
    assert "900 tokens used" in why
    assert "1,000 tokens" in why
    assert budget.refusal(spent, Projection(0, 100, 0), None) is None
    price = Price(input=1000.0, output=0.0)
    cost_budget = Budget(max_cost=0.6)
    why = cost_budget.refusal(spent, Projection(0, 200, 0), price)
    assert why is not None
    assert "$0.5000 spent" in why
    assert cost_budget.refusal(spent, Projection(0, 50, 0), price) is None


def test_calls_in_flight_hold_their_projection_up_the_chain() -> None:
    """Two children's calls made at once: the second sees what the first holds, and the
    hold turns into the real usage once the call reports it."""
    price = Price(input=1000.0, output=1000.0)
    parent = Ledger(Budget(max_tokens=1000, max_cost=1.0))
    first, second = Ledger(parent=parent), Ledger(parent=parent)
    call = Projection(0, 600, 0)
    assert first.refusal(call, price) is None
    hold = first.hold(call, price)
    assert (parent.held_tokens, parent.held_cost) == (600, pytest.approx(0.6))
    why = second.refusal(call, price)
    assert why is not None
    assert "600 tokens used (with the model calls in progress)" in why
    assert "the parent's budget" in why
    hold.release()
    hold.release()  # once only
    first.add(Usage(input_tokens=100, cost=0.1))
    assert (parent.held_tokens, parent.held_cost) == (0, 0.0)
    assert second.refusal(call, price) is None
    assert parent.root is parent
    assert first.root is parent


def looping(n: int) -> list[Any]:
    return [reply("again", [("echo", {"text": "x"})]) for _ in range(n)]


async def test_the_loop_stops_before_the_call_that_would_pass_the_token_cap() -> None:
    events: list[Event] = []
    agent = make_agent(looping(50), events)
    result = await agent.run(RunRequest("loop", max_tokens=400))
    assert result.stop_reason == "budget"
    assert result.error is not None
    assert "budget of 400 tokens" in result.error
    assert 1 <= result.turns < 50
    assert total_tokens(result.usage) <= 400
    assert sum(isinstance(e, TurnStart) for e in events) == result.turns
    end = events[-1]
    assert isinstance(end, AgentEnd)
    assert end.stop_reason == "budget"


async def test_a_cap_below_the_first_call_keeps_the_prompt() -> None:
    """Refused before any call: no turn, but the prompt is recorded in the conversation."""
    events: list[Event] = []
    agent = make_agent([reply("never")], events)
    result = await agent.run(RunRequest("a prompt worth keeping", max_tokens=5))
    assert (result.stop_reason, result.turns) == ("budget", 0)
    assert isinstance(agent.messages[-1], UserMessage)
    assert isinstance(agent.provider, ScriptedProvider)
    assert agent.provider.requests == []


async def test_cost_cap_uses_the_provider_price() -> None:
    """The projection prices the context with the provider's price for the model."""
    events: list[Event] = []
    agent = make_agent(looping(50), events)
    assert isinstance(agent.provider, ScriptedProvider)
    agent.provider.price = Price(input=100.0, output=100.0)
    result = await agent.run(RunRequest("loop", max_cost=0.02))
    assert result.stop_reason == "budget"
    assert result.error is not None
    assert "budget of $0.0200" in result.error
    assert result.turns >= 1
