"""LLM providers: one module per wire format (see README.md in this folder).

:func:`make_provider` builds the provider for a resolved :class:`~agentd.config.ModelChoice`.
The provider modules (and httpx) are imported only when a provider is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentd.providers.retry import RetryPolicy

if TYPE_CHECKING:
    import httpx

    from agentd.config import ModelChoice
    from agentd.providers.base import Provider
    from agentd.providers.stream import HttpProvider

__all__ = ["RetryPolicy", "make_provider"]


def make_provider(
    choice: ModelChoice, http: httpx.AsyncClient, *, retry: RetryPolicy | None = None
) -> Provider:
    """The provider for ``choice``, sending its requests through ``http``.

    For the ``mock`` provider with an empty ``base_url``, the shared in-process mock server
    is started on the first request (:func:`agentd.mockllm.ensure_mock_server`).
    """
    from agentd.providers.stream import BaseUrl

    base_url: BaseUrl = choice.base_url
    if not base_url and choice.provider == "mock":
        from agentd.mockllm import ensure_mock_server

        base_url = ensure_mock_server
    kind = _provider_class(choice.api)
    return kind(
        http,
        name=choice.provider,
        model=choice.model,
        base_url=base_url,
        api_key=choice.api_key,
        price=choice.price,
        retry=retry,
    )


def _provider_class(api: str) -> type[HttpProvider]:
    """The provider class of a wire format (``openai`` for anything unknown)."""
    if api == "anthropic":
        from agentd.providers.anthropic import AnthropicProvider

        return AnthropicProvider
    if api == "openai-responses":
        from agentd.providers.openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider
    from agentd.providers.openai import OpenAIProvider

    return OpenAIProvider
