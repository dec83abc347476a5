"""The session's model binding: the one function that turns (provider, model, base URL,
credentials) into a provider ready to call, and the stand-in of a loaded session's provider
until then.

:func:`bind_model` is used wherever a session gets a model: at creation, at the first model
call of a loaded session, by ``session/setModel``, for a custom command's model and for a
subagent's (which is created like any session). A session's ``base_url`` applies to its own
provider: a model change on the same provider keeps it, one to another provider drops it.

Reading a stored session (load, messages, export, list, fork, delete, replay) never builds its
provider, so a session whose provider is not configured where the daemon runs, or whose key is
missing, stays readable. :meth:`agentd.session.runtime.SessionRuntime.ensure_model` resolves it
before the next model call (prompt, compaction); an unresolvable one fails that call with the
configuration error, and ``session/setModel`` to a working provider makes the session usable.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.agent.run import ModelBinding

if TYPE_CHECKING:
    from agentd.config.load import Config
    from agentd.config.prices import Price
    from agentd.providers.base import ProviderRequest, StreamItem
    from agentd.providers.retry import RetryPolicy
    from agentd.session.shared import SharedResources

ModelSource = Callable[[str, str, "dict[str, str] | None"], Awaitable[ModelBinding]]
"""Builds the provider for ``(provider name, model, client provider env)``; raises ConfigError
(with what to set) when it cannot."""


async def bind_model(
    shared: SharedResources,
    cwd: Path,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    env: dict[str, str] | None,
    *,
    config: Config | None = None,
) -> ModelBinding:
    """The provider and model a session in ``cwd`` calls: resolved from ``config`` (read
    fresh for ``cwd`` when None) and the client's provider variables ``env`` (the daemon's
    when None), at ``base_url`` when given; ConfigError (what to set) when it cannot be
    built."""
    from agentd.providers import make_provider

    if config is None:
        config = await asyncio.to_thread(shared.config, cwd)  # files: off the event loop
    choice = await shared.choose_model(config, provider, model, base_url, env)
    client = make_provider(choice, shared.http_for(choice, env), retry=retry_policy(config))
    return ModelBinding(client, choice.model, choice.context_window)


def retry_policy(config: Config) -> RetryPolicy:
    """The ``[retry]`` section: ``max_attempts``, ``base_delay_ms``, ``max_delay_ms``."""
    from agentd.providers.retry import RetryPolicy

    section = config.settings.retry
    return RetryPolicy(
        max_attempts=section.max_attempts,
        base_delay=section.base_delay_ms / 1000,
        max_delay=section.max_delay_ms / 1000,
    )


class UnresolvedProvider:
    """Stands in for a provider not built yet. The runtime resolves the real one before any
    model call, so calling this one is a bug (it raises)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def price_of(self, model: str) -> Price | None:
        return None

    def stream(self, request: ProviderRequest) -> AsyncGenerator[StreamItem, None]:
        raise RuntimeError(f"provider {self.name!r} used before it was resolved")
