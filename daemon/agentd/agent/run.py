"""What a run is asked to do: one :class:`RunRequest`, built by the session service and
taken as is by the session runtime and the agent loop.

A run's model is a value of the request (:class:`ModelBinding`): a custom command's model
applies to its run only because the loop calls the request's binding, never because the
agent's own provider was swapped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from agentd.protocol.content import UserContent

if TYPE_CHECKING:
    from agentd.agent.budget import Ledger
    from agentd.providers.base import Provider


class ModelBinding(msgspec.Struct, frozen=True):
    """A provider ready to call (``provider.name`` is the provider reported), the model it is
    called with and that model's context window (None: unknown)."""

    provider: Provider
    model: str
    context_window: int | None = None


class RunRequest(msgspec.Struct, frozen=True):
    """One run: the ``text`` the model reads (a custom command's expansion), its ``images``,
    its caps (``max_turns``: None for the session's limit; ``max_cost`` in US dollars and
    ``max_tokens``: None for no cap), the ``command`` as typed (kept on the user message),
    the ``parent`` ledger of the run this one works for (a subagent's: its spending counts
    there too, see :class:`~agentd.agent.budget.Ledger`) and ``model``, the model of this run
    only (None: the session's)."""

    text: str
    images: list[UserContent] = msgspec.field(default_factory=list)
    max_turns: int | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    command: str | None = None
    parent: Ledger | None = None
    model: ModelBinding | None = None
