"""Fakes for unit tests: a scripted provider and a tiny echo tool (no mocks, no patching)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import msgspec

from agentd.config.prices import Price
from agentd.protocol.content import AssistantContent, AssistantMessage, TextContent, ToolCall, Usage
from agentd.protocol.events import Location, TextDelta, ToolCallDelta, ToolCallStartDelta
from agentd.providers.base import ProviderRequest, StreamEnd, StreamItem
from agentd.tools.base import ToolContext, ToolResult


def reply(
    text: str = "", calls: list[tuple[str, dict[str, Any]]] = (), *, stop: str | None = None
) -> list[StreamItem]:
    """The stream items of one assistant reply: text in 3-char deltas, then tool calls."""
    items: list[StreamItem] = []
    content: list[AssistantContent] = []
    if text:
        items += [TextDelta(index=0, text=text[i : i + 3]) for i in range(0, len(text), 3)]
        content.append(TextContent(text=text))
    for n, (name, args) in enumerate(calls):
        call_id = f"call_{n}_{name}"
        index = len(content)
        items.append(ToolCallStartDelta(index=index, id=call_id, name=name))
        items.append(ToolCallDelta(index=index, arguments=msgspec.json.encode(args).decode()))
        content.append(ToolCall(id=call_id, name=name, arguments=args))
    reason = stop or ("tool_use" if calls else "stop")
    message = AssistantMessage(
        id="",
        content=content,
        provider="scripted",
        model="m",
        stop_reason=reason,  # type: ignore[arg-type]
        usage=Usage(input_tokens=10, output_tokens=5, cost=0.001),
        timestamp=time.time(),
    )
    items.append(StreamEnd(message))
    return items


@dataclass
class ScriptedProvider:
    """Yields pre-scripted replies, one per call; records each request it got."""

    turns: list[list[StreamItem]]
    name: str = "scripted"
    delay: float = 0.0
    price: Price | None = None
    requests: list[ProviderRequest] = field(default_factory=list)

    def price_of(self, model: str) -> Price | None:
        return self.price

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamItem]:
        self.requests.append(request)
        items = self.turns.pop(0) if self.turns else reply("(script exhausted)")
        for item in items:
            if self.delay:
                await asyncio.sleep(self.delay)
            yield item


class EchoTool:
    """Echoes its text; sleeps first when asked (to test ordering and cancellation)."""

    name: ClassVar[str] = "echo"
    description: ClassVar[str] = "Echo the text back."
    kind: ClassVar[str] = "other"
    mutating: ClassVar[bool] = False

    class Params(msgspec.Struct, forbid_unknown_fields=True):
        text: str
        sleep: float = 0.0

    async def run(self, params: EchoTool.Params, ctx: ToolContext) -> ToolResult:
        if params.sleep:
            await asyncio.sleep(params.sleep)
        ctx.on_update(params.text)
        return ToolResult(params.text)

    def locations(self, params: EchoTool.Params, ctx: ToolContext) -> list[Location]:
        return []
