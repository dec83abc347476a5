"""Assembling one streamed reply: content blocks in arrival order, deltas, the final message.

Both wire formats feed a :class:`MessageBuilder`: it numbers content blocks (the ``index`` of
every delta is the block's position in the final :class:`AssistantMessage`), accumulates text
as lists of fragments (joined once at the end) and decodes tool arguments when the reply ends.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

import msgspec

from agentd.config.prices import Price, usage_cost
from agentd.protocol.content import (
    AssistantContent,
    AssistantMessage,
    Citation,
    ServerToolCall,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from agentd.protocol.events import (
    Delta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStartDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from agentd.providers.sse import ServerSentEvent

_RAW_SHOWN = 200

Parsed = Delta | ToolExecutionStart | ToolExecutionEnd
"""What a parser makes of one event: deltas, and the events of a provider-side tool."""


class ReplyParser(Protocol):
    """Turns one wire format's events into deltas; knows when the reply is complete."""

    complete: bool
    """True once the provider signalled the end of the reply (finish reason, message_stop)."""

    def feed(self, event: ServerSentEvent) -> Sequence[Parsed]:
        """Deltas (and provider-side tool events) for one event. Raises ProviderFailure for
        error events or bad data."""
        ...

    def finish(self) -> AssistantMessage:
        """The complete message. Raises ProviderFailure if the reply is not complete."""
        ...

    def failed(self, error: str) -> AssistantMessage:
        """What arrived so far, as an error message."""
        ...


class _Block(msgspec.Struct):
    kind: str  # "text" | "thinking" | "tool_call" | "server_tool"
    parts: list[str] = msgspec.field(default_factory=list)
    call_id: str = ""
    name: str = ""
    signature: str | None = None
    redacted: bool = False
    server: ServerToolCall | None = None
    citations: list[tuple[Citation, tuple[int, int] | None]] = msgspec.field(default_factory=list)


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Decode a tool call's JSON arguments: ``(arguments, None)`` or ``({}, parse_error)``.

    Empty arguments and JSON ``null`` mean no arguments.
    """
    if not raw.strip():
        return {}, None
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        shown = raw if len(raw) <= _RAW_SHOWN else raw[:_RAW_SHOWN] + "…"
        return {}, f"the tool arguments are not valid JSON ({exc}); received: {shown}"
    if value is None:
        return {}, None
    if not isinstance(value, dict):
        kind = type(value).__name__
        return {}, f"the tool arguments must be a JSON object, not a {kind}"
    return value, None


class MessageBuilder:
    """Collects one reply's blocks, usage and stop reason; builds the AssistantMessage."""

    def __init__(self, *, message_id: str, provider: str, model: str, price: Price | None) -> None:
        self.message_id = message_id
        self.provider = provider
        self.model = model
        self.price = price
        self.usage = Usage()
        self.stop_reason: StopReason | None = None
        self.error: str | None = None
        self._blocks: list[_Block] = []

    @property
    def block_count(self) -> int:
        """How many content blocks were opened so far."""
        return len(self._blocks)

    def kind_of(self, index: int) -> str:
        """The kind of block ``index``: ``text``, ``thinking`` or ``tool_call``."""
        return self._blocks[index].kind

    def open(self, kind: str) -> int:
        """Open a text or thinking block; return its index."""
        self._blocks.append(_Block(kind))
        return len(self._blocks) - 1

    def add_text(self, index: int, text: str) -> Delta:
        """Append text or thinking to block ``index``."""
        block = self._blocks[index]
        block.parts.append(text)
        if block.kind == "thinking":
            return ThinkingDelta(index=index, text=text)
        return TextDelta(index=index, text=text)

    def set_signature(self, index: int, signature: str) -> None:
        """Append to the opaque signature of thinking block ``index``."""
        block = self._blocks[index]
        block.signature = (block.signature or "") + signature

    def add_redacted(self, data: str) -> None:
        """Add a redacted thinking block: encrypted reasoning, kept whole, with no deltas."""
        self._blocks.append(_Block("thinking", signature=data, redacted=True))

    def open_tool_call(self, call_id: str, name: str) -> ToolCallStartDelta:
        """Open a tool call block; the delta carries its index."""
        self._blocks.append(_Block("tool_call", call_id=call_id, name=name))
        return ToolCallStartDelta(index=len(self._blocks) - 1, id=call_id, name=name)

    def add_arguments(self, index: int, chunk: str) -> ToolCallDelta:
        """Append a raw chunk of the JSON arguments of tool call ``index``."""
        self._blocks[index].parts.append(chunk)
        return ToolCallDelta(index=index, arguments=chunk)

    def add_server_call(self, call: ServerToolCall) -> None:
        """Add a tool call the provider ran on its side, with its result (no deltas)."""
        self._blocks.append(_Block("server_tool", server=call))

    def add_citation(
        self, index: int, citation: Citation, span: tuple[int, int] | None = None
    ) -> None:
        """Cite a source for text block ``index``; ``span``: the cited characters of the
        block's text (the cited text is cut from it when the reply ends)."""
        self._blocks[index].citations.append((citation, span))

    def has_tool_calls(self) -> bool:
        """Whether any tool call block was opened."""
        return any(block.kind == "tool_call" for block in self._blocks)

    def build(self, stop_reason: StopReason, error: str | None = None) -> AssistantMessage:
        """The message so far, with ``stop_reason``; usage carries the cost.

        Blocks are never dropped, so every delta's index stays valid: parsers open a text or
        thinking block only when its first content arrives.
        """
        usage = self.usage
        usage.cost = usage_cost(usage, self.price)
        return AssistantMessage(
            id=self.message_id,
            content=[_finish(block) for block in self._blocks],
            provider=self.provider,
            model=self.model,
            usage=usage,
            stop_reason=stop_reason,
            error_message=error,
            timestamp=time.time(),
        )


def _finish(block: _Block) -> AssistantContent:
    if block.server is not None:
        return block.server
    text = "".join(block.parts)
    if block.kind == "text":
        return TextContent(text=text, citations=[_cited(text, c, s) for c, s in block.citations])
    if block.kind == "thinking":
        return ThinkingContent(thinking=text, signature=block.signature, redacted=block.redacted)
    arguments, problem = parse_arguments(text)
    return ToolCall(id=block.call_id, name=block.name, arguments=arguments, parse_error=problem)


def _cited(text: str, citation: Citation, span: tuple[int, int] | None) -> Citation:
    if span is None or citation.cited_text:
        return citation
    return msgspec.structs.replace(citation, cited_text=text[span[0] : span[1]])
