"""One assistant reply of a run: the provider's stream passed on as events, its tool calls
under ids unique in the session (:mod:`agentd.agent.callids`), and what stands in for a reply
the stream cut short (its text so far; an estimate of the usage a cancelled call spent).

The loop (:meth:`agentd.agent.loop.Agent._call_model`) records the reply; these functions
only stream and describe it.
"""

from __future__ import annotations

import contextlib

from agentd.agent.callids import ReplyCallIds
from agentd.agent.messages import cut_short, estimate_tokens
from agentd.agent.runstate import ActiveRun
from agentd.agent.scheduling import EventSink
from agentd.config.prices import usage_cost
from agentd.protocol.content import AssistantMessage, Usage
from agentd.protocol.events import (
    MessageUpdate,
    Retry,
    TextDelta,
    ToolCallStartDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from agentd.providers.base import ProviderRequest, StreamEnd


async def stream_reply(
    run: ActiveRun, request: ProviderRequest, sink: EventSink, text: list[str], ids: ReplyCallIds
) -> StreamEnd:
    """The provider's stream for ``request``, its deltas sent to ``sink`` (their text kept
    in ``text``, tool calls renamed by ``ids``); a stream that ends without its end is a
    failed reply holding the text so far."""
    async with contextlib.aclosing(run.binding.provider.stream(request)) as stream:
        async for item in stream:
            if isinstance(item, StreamEnd):
                return item
            if isinstance(item, (Retry, ToolExecutionStart, ToolExecutionEnd)):
                sink(item)  # a provider-side tool's events come with the reply
                continue
            if isinstance(item, TextDelta):
                text.append(item.text)
            elif isinstance(item, ToolCallStartDelta):
                item = ids.start(item)
            sink(MessageUpdate(delta=item))
    return StreamEnd(cut_short_reply(run, request.message_id, text, failed=True))


def cut_short_reply(
    run: ActiveRun, message_id: str, text: list[str], *, failed: bool
) -> AssistantMessage:
    """The reply ``message_id`` with the ``text`` streamed so far (``failed``: an error, else
    a cancel), under the run's provider and model."""
    name, model = run.binding.provider.name, run.binding.model
    return cut_short(message_id, "".join(text), provider=name, model=model, failed=failed)


def estimated_usage(
    run: ActiveRun, request: ProviderRequest, text: list[str], preamble_tokens: int
) -> Usage:
    """A call cut by a cancel reports no usage, yet its prompt was sent: an estimate
    (encoded size / 4) counts in the run's usage, costed at the model's price, so a
    cancelled or timed-out run reports neither zero tokens nor zero cost. The stored message
    keeps no usage (nothing was measured)."""
    sent = estimate_tokens(request.messages) + preamble_tokens
    usage = Usage(input_tokens=sent, output_tokens=len("".join(text)) // 4)
    usage.cost = usage_cost(usage, run.binding.provider.price_of(run.binding.model))
    return usage
