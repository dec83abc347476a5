"""LLM providers: one module per wire format (see README.md in this folder).

:func:`make_provider` builds the provider for a resolved :class:`~agentd.config.load.ModelChoice`.
The provider modules are imported only when a provider is made (httpx only for an ``https``
URL or a caller's ``httpx.AsyncClient``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentd.providers.retry import RetryPolicy

if TYPE_CHECKING:
    import httpx

    from agentd.config.load import ModelChoice
    from agentd.providers.base import Provider
    from agentd.providers.http_types import ProviderHttp
    from agentd.providers.stream import BaseUrl, HttpProvider

__all__ = ["RetryPolicy", "make_provider"]


def make_provider(
    choice: ModelChoice,
    http: ProviderHttp | httpx.AsyncClient,
    *,
    retry: RetryPolicy | None = None,
    base_url: BaseUrl | None = None,
) -> Provider:
    """The provider for ``choice``, sending its requests through ``http``; ``base_url``
    (a URL, or a coroutine function giving one on the first request) replaces the choice's.
    """
    kind = _provider_class(choice.api)
    return kind(
        http,
        name=choice.provider,
        model=choice.model,
        base_url=choice.base_url if base_url is None else base_url,
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
