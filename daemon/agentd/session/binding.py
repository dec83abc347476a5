"""The session's model binding: resolved at once for a new session, at the first model call
for a loaded one.

Reading a stored session (load, messages, export, list, fork, delete, replay) never builds its
provider, so a session whose provider is not configured where the daemon runs, or whose key is
missing, stays readable. :meth:`agentd.session.runtime.SessionRuntime.ensure_model` resolves it
before the next model call (prompt, compaction); an unresolvable one fails that call with the
configuration error, and ``session/setModel`` to a working provider makes the session usable.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from agentd.config.prices import Price
    from agentd.providers.base import Provider, ProviderRequest, StreamItem


class ResolvedModel(msgspec.Struct, frozen=True):
    """A provider ready to call (``provider.name`` is the provider the session reports), the
    model and its context window."""

    provider: Provider
    model: str
    context_window: int | None


ModelSource = Callable[[str, str, "dict[str, str] | None"], Awaitable[ResolvedModel]]
"""Builds the provider for ``(provider name, model, client provider env)``; raises ConfigError
(with what to set) when it cannot."""


class UnresolvedProvider:
    """Stands in for a provider not built yet. The runtime resolves the real one before any
    model call, so calling this one is a bug (it raises)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def price_of(self, model: str) -> Price | None:
        return None

    def stream(self, request: ProviderRequest) -> AsyncGenerator[StreamItem, None]:
        raise RuntimeError(f"provider {self.name!r} used before it was resolved")
