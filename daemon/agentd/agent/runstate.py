"""What belongs to one run of the agent loop: its result so far (:class:`RunResult`, the
``session/prompt`` answer's source), its model, limits, ledger and open turn
(:class:`ActiveRun`), and the loop control that ends it (:class:`Stop`).

An :class:`ActiveRun` is made by :meth:`agentd.agent.loop.Agent.run` for one run and dropped
when it ends; the agent's own fields (its configuration and conversation) never hold per-run
state.
"""

from __future__ import annotations

import asyncio

import msgspec

from agentd.agent.budget import Budget, Hold, Ledger, project_next_call
from agentd.agent.run import ModelBinding, RunRequest
from agentd.agent.scheduling import SinkFailed
from agentd.protocol.content import Message, ToolCall, Usage
from agentd.protocol.events import AgentEnd, ErrorEvent, RunStopReason


class RunResult(msgspec.Struct):
    """How a run ended (the ``session/prompt`` result). ``failure`` is the exception of a
    run that a bug ended (stop reason ``error``), for the caller to log."""

    stop_reason: RunStopReason = "end_turn"
    turns: int = 0
    usage: Usage = msgspec.field(default_factory=Usage)
    error: str | None = None
    refused: list[tuple[ToolCall, str]] = msgspec.field(default_factory=list)
    """Tool calls the authorizer refused, with the refusal text."""
    failure: Exception | None = None
    error_code: str | None = None
    """The ``error`` event's code when the run ended with an error (``provider_error``,
    ``internal_error``, or a :class:`SinkFailed` code such as ``store_error``)."""


class Stop(Exception):
    """Loop control: end the run with this stop reason."""

    def __init__(self, reason: RunStopReason, error: str | None = None) -> None:
        super().__init__(reason)
        self.reason: RunStopReason = reason
        self.error = error


class ActiveRun(msgspec.Struct):
    """What belongs to one run: its model, its result so far, its limits and its open turn."""

    max_turns: int
    ledger: Ledger
    binding: ModelBinding
    result: RunResult = msgspec.field(default_factory=RunResult)
    open_turn: int | None = None
    task: asyncio.Task[RunResult] | None = None
    aborted: SinkFailed | None = None
    """Set by :meth:`Agent.abort`: the run ends with this failure, not as cancelled."""
    hold: Hold | None = None
    """The next model call's projection, held in the ledgers until its usage is recorded."""

    def budget_refusal(self, context: list[Message], preamble_tokens: int) -> str | None:
        """Why the budget forbids the next model call on ``context``, or None; a call that
        may be made holds its projection in the ledgers until it is recorded."""
        next_call = project_next_call(context, preamble_tokens)
        price = self.binding.provider.price_of(self.binding.model)
        self.release()
        refusal = self.ledger.refusal(next_call, price)
        if refusal is None:
            self.hold = self.ledger.hold(next_call, price)
        return refusal

    def release(self) -> None:
        """Drop the next call's held projection (its usage is recorded, or no call follows)."""
        if self.hold is not None:
            self.hold.release()
            self.hold = None

    def spend(self, usage: Usage) -> None:
        """Count ``usage`` in the run (and the runs above it, see :class:`Ledger`), in place
        of what its call held."""
        self.release()
        self.ledger.add(usage)
        self.result.usage = self.ledger.usage


def end_events(result: RunResult) -> list[ErrorEvent | AgentEnd]:
    """How a run's end is reported: an ``error`` event first when it failed (its code
    filled in: ``internal_error`` for a bug, else ``provider_error``), then ``agent_end``."""
    events: list[ErrorEvent | AgentEnd] = []
    if result.stop_reason == "error" and result.error:
        if result.error_code is None:
            result.error_code = "internal_error" if result.failure else "provider_error"
        events.append(ErrorEvent(message=result.error, code=result.error_code))
    usage = result.usage
    end = AgentEnd(
        stop_reason=result.stop_reason,
        turns=result.turns,
        usage=usage,
        cost=usage.cost,
        error=result.error,
    )
    return [*events, end]


def run_budget(request: RunRequest, binding: ModelBinding) -> Budget | None:
    """The caps of ``request`` on ``binding``'s model (None: none); ConfigError when a cost
    cap meets a model whose prices are unknown."""
    if request.max_cost is None and request.max_tokens is None:
        return None
    price = binding.provider.price_of(binding.model)
    return Budget.of_run(request.max_cost, request.max_tokens, price, binding.model)
