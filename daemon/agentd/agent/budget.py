"""Spend limits for one run: ``max_cost`` (US dollars) and ``max_tokens`` (every token the run's
model calls consume: input, output, cache reads and writes).

The loop asks :meth:`Budget.refusal` before each model call. A call is refused when what the
run has spent plus a projection of that call would pass a cap. The projection: the next call's
input is the context it will send (the previous reply's input and output plus an estimate of
what was added since); its output is the previous reply's output size. Context that the
previous call read from (or wrote to) the provider's cache is projected at the cache-read
price. Estimated tokens get a margin (:data:`ESTIMATE_MARGIN`). So the run stops before
the call that would pass the cap; a reply far longer than the one before it, or text that
takes many more tokens per byte than usual, can still take the final figure past the cap by
that difference.

Calls made at the same time (parallel subagents spending into one parent's run) cannot pass
a cap together: a call that may be made **holds** its projection in every ledger up the chain
(:meth:`Ledger.hold`) until its usage is recorded, and every refusal counts what the calls in
flight hold as spent.
"""

from __future__ import annotations

import msgspec

from agentd.agent.messages import estimate_tokens
from agentd.config.prices import Price
from agentd.errors import ConfigError
from agentd.protocol.content import AssistantMessage, Message, Usage

_MILLION = 1_000_000
ESTIMATE_MARGIN = 1.25
"""Estimated (not yet reported) tokens are counted this much higher: ``bytes / 4`` is rough,
and code and JSON often take fewer bytes per token."""


class Projection(msgspec.Struct, frozen=True):
    """What the next model call is expected to consume."""

    cached_input: int
    new_input: int
    output: int

    @property
    def tokens(self) -> int:
        return self.cached_input + self.new_input + self.output

    def cost(self, price: Price) -> float:
        cached_price = price.cache_read or price.input
        return (
            self.cached_input * cached_price
            + self.new_input * price.input
            + self.output * price.output
        ) / _MILLION


class Budget(msgspec.Struct, frozen=True):
    """The caps of one run; ``None`` means no cap of that kind."""

    max_cost: float | None = None
    max_tokens: int | None = None

    @classmethod
    def of_run(
        cls, max_cost: float | None, max_tokens: int | None, price: Price | None, model: str
    ) -> Budget | None:
        """A run's caps (None when it has none); ConfigError when a cost cap meets a model
        whose ``price`` is unknown."""
        if max_cost is None and max_tokens is None:
            return None
        if max_cost is not None and price is None:
            raise ConfigError(
                f"a cost cap needs the prices of model {model!r}, which are unknown; add "
                f'[prices."{model}"] input = …, output = … (USD per million tokens) to the '
                "config file, or cap tokens instead"
            )
        return cls(max_cost=max_cost, max_tokens=max_tokens)

    def refusal(
        self,
        spent: Usage,
        next_call: Projection,
        price: Price | None,
        held: tuple[int, float] = (0, 0.0),
    ) -> str | None:
        """Why the next model call may not be made (a sentence for people), or None;
        ``held``: the tokens and cost that calls in flight hold (counted as spent)."""
        held_tokens, held_cost = held
        if self.max_tokens is not None:
            used = total_tokens(spent) + held_tokens
            if used + next_call.tokens > self.max_tokens:
                return (
                    f"stopped before the next model call: {used:,} tokens used"
                    f"{_in_flight(held_tokens > 0)}, about {next_call.tokens:,} more would "
                    f"pass the budget of {self.max_tokens:,} tokens"
                )
        if self.max_cost is not None and price is not None:
            projected, cost = next_call.cost(price), spent.cost + held_cost
            if cost + projected > self.max_cost:
                return (
                    f"stopped before the next model call: ${cost:.4f} spent"
                    f"{_in_flight(held_cost > 0)}, about ${projected:.4f} more would pass the "
                    f"budget of ${self.max_cost:.4f}"
                )
        return None


def _in_flight(any_held: bool) -> str:
    return " (with the model calls in progress)" if any_held else ""


def total_tokens(usage: Usage) -> int:
    """Every token a usage counts."""
    return (
        usage.input_tokens
        + usage.output_tokens
        + usage.cache_read_tokens
        + usage.cache_write_tokens
    )


def project_next_call(messages: list[Message], preamble_tokens: int) -> Projection:
    """The next call's projection for a context of ``messages``.

    Based on the newest reply that reports usage (its input and output are the context it
    saw) plus an estimate of the messages after it; with no such reply, ``preamble_tokens``
    (system prompt and tools) plus an estimate of every message.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage) and total_tokens(message.usage):
            usage = message.usage
            cached = usage.cache_read_tokens + usage.cache_write_tokens
            added = _with_margin(estimate_tokens(messages[index + 1 :]))
            new = usage.input_tokens + usage.output_tokens + added
            return Projection(cached_input=cached, new_input=new, output=usage.output_tokens)
    new = _with_margin(preamble_tokens + estimate_tokens(messages))
    return Projection(cached_input=0, new_input=new, output=0)


def _with_margin(estimate: int) -> int:
    return int(estimate * ESTIMATE_MARGIN)


class Ledger:
    """What one run has spent, its subagents' runs included, and the caps over it.

    A subagent's run gets a ledger whose ``parent`` is the ledger of the run that started
    it: every usage it records is added up the chain (so the parent's run usage includes its
    children's), and a model call of the child is refused when any ledger up the chain would
    pass its budget (so a parent's cap covers its children, parallel ones together).
    """

    def __init__(self, budget: Budget | None = None, parent: Ledger | None = None) -> None:
        self.budget = budget
        self.parent = parent
        self.usage = Usage()
        self.held_tokens = 0
        """Tokens projected for the model calls in flight here and below (see :class:`Hold`)."""
        self.held_cost = 0.0
        self.subagents = 0
        """Subagents started by this run and the runs below it (counted at the top run)."""

    @property
    def root(self) -> Ledger:
        """The ledger of the top-level run (this one when it has no parent)."""
        ledger = self
        while ledger.parent is not None:
            ledger = ledger.parent
        return ledger

    @property
    def capped(self) -> bool:
        """Whether this ledger or one above it has a budget."""
        return self.budget is not None or (self.parent is not None and self.parent.capped)

    def add(self, usage: Usage) -> None:
        """Record ``usage`` here and in every ledger above."""
        ledger: Ledger | None = self
        while ledger is not None:
            ledger.usage = ledger.usage.add(usage)
            ledger = ledger.parent

    def refusal(self, next_call: Projection, price: Price | None) -> str | None:
        """Why the next model call would pass a cap of this ledger or one above (None: it
        may be made)."""
        ledger: Ledger | None = self
        while ledger is not None:
            if ledger.budget is not None:
                held = (ledger.held_tokens, ledger.held_cost)
                refusal = ledger.budget.refusal(ledger.usage, next_call, price, held)
                if refusal is not None:
                    return refusal if ledger is self else f"{refusal} (the parent's budget)"
            ledger = ledger.parent
        return None

    def hold(self, next_call: Projection, price: Price | None) -> Hold:
        """Hold ``next_call``'s projection here and in every ledger above until the call's
        usage is recorded (:meth:`Hold.release`, then :meth:`add`): ask :meth:`refusal`
        first, with no await in between, so that concurrent calls see each other."""
        return Hold(self, next_call.tokens, next_call.cost(price) if price is not None else 0.0)


class Hold:
    """One model call's projection, held in a chain of ledgers (see :meth:`Ledger.hold`)."""

    def __init__(self, ledger: Ledger, tokens: int, cost: float) -> None:
        self._ledger: Ledger | None = ledger
        self.tokens, self.cost = tokens, cost
        self._apply(1)

    def release(self) -> None:
        """Give the held amounts back (once; later calls do nothing)."""
        if self._ledger is not None:
            self._apply(-1)
            self._ledger = None

    def _apply(self, sign: int) -> None:
        ledger = self._ledger
        while ledger is not None:
            ledger.held_tokens += sign * self.tokens
            ledger.held_cost = max(0.0, ledger.held_cost + sign * self.cost)
            ledger = ledger.parent
