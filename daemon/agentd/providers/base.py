"""The provider contract shared by every LLM backend.

``Provider.stream(request)`` returns an async iterator of :data:`StreamItem`:
:data:`~agentd.protocol.events.Delta` values as the reply streams in, :class:`Retry` events
when a transient failure is retried, ``tool_execution_start``/``_end`` events of the tools the
provider runs on its side (:data:`ServerToolEvent`, each call's start before its end), and
exactly one final :class:`StreamEnd` carrying the complete :class:`AssistantMessage`.

**It must not raise** for request, network or model failures: those end the stream with a
``StreamEnd`` whose message has ``stop_reason="error"`` and an ``error_message``
(``context_overflow`` is flagged on the StreamEnd). Cancelling the consuming task (or closing
the iterator) closes the HTTP stream at once.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Protocol

import msgspec

from agentd.config.prices import Price
from agentd.protocol.content import AssistantMessage, Message
from agentd.protocol.events import Delta, Retry, ToolExecutionEnd, ToolExecutionStart
from agentd.toolspec import ToolSpec


class ProviderRequest(msgspec.Struct, frozen=True):
    """One LLM call: the whole context plus the tools the model may call."""

    model: str
    system_prompt: str
    messages: list[Message]
    tools: list[ToolSpec] = msgspec.field(default_factory=list)
    max_tokens: int = 8192
    message_id: str = ""


class StreamEnd(msgspec.Struct, frozen=True):
    """The last item of every stream: the complete message (possibly an error message)."""

    message: AssistantMessage
    context_overflow: bool = False


ServerToolEvent = ToolExecutionStart | ToolExecutionEnd
"""A tool the provider runs on its side (its web search) started or ended during the reply."""

StreamItem = Delta | ServerToolEvent | Retry | StreamEnd


class Provider(Protocol):
    """An LLM backend. Implementations take an injected HTTP client
    (:class:`~agentd.providers.transport.ProviderHttp`, or an ``httpx.AsyncClient``)."""

    name: str

    def price_of(self, model: str) -> Price | None:
        """The prices of ``model`` on this provider, or None when they are unknown."""
        ...

    def stream(self, request: ProviderRequest) -> AsyncGenerator[StreamItem, None]:
        """Stream one reply. Never raises for provider failures (see module docstring)."""
        ...
