"""Builders for the messages the agent loop adds to a conversation.

Pure functions over :mod:`agentd.protocol.content`: user prompts, assistant replies cut short,
tool results, and the filter that decides which stored messages are sent back to the model.
"""

from __future__ import annotations

import time
import uuid

import msgspec

from agentd.protocol.content import (
    AssistantContent,
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from agentd.protocol.events import Location
from agentd.tools.base import Tool, ToolContext, ToolResult


def estimate_tokens(messages: list[Message]) -> int:
    """A cheap token estimate (encoded JSON bytes / 4)."""
    return sum(len(msgspec.json.encode(m)) for m in messages) // 4


def new_id() -> str:
    """A short unique id for messages and runs."""
    return uuid.uuid4().hex[:16]


def user_message(
    text: str, images: list[UserContent] | None = None, command: str | None = None
) -> UserMessage:
    """A user message: the text first, then any images (``command``: the custom command the
    user typed, when ``text`` is its expansion)."""
    content: list[UserContent] = [TextContent(text=text), *(images or [])]
    return UserMessage(id=new_id(), content=content, timestamp=time.time(), command=command)


def cut_short(
    message_id: str, text: str, *, provider: str, model: str, failed: bool
) -> AssistantMessage:
    """An assistant reply that did not complete: ``aborted`` by a cancel (keeping the text so
    far), or ``error`` when the provider stream ended without a final message."""
    content: list[AssistantContent] = [TextContent(text=text)] if text else []
    return AssistantMessage(
        id=message_id,
        content=content,
        provider=provider,
        model=model,
        stop_reason="error" if failed else "aborted",
        error_message="the provider stream ended without a final message" if failed else None,
        timestamp=time.time(),
    )


def tool_result_message(call: ToolCall, result: ToolResult) -> ToolResultMessage:
    """The conversation message for a finished tool call."""
    content: list[UserContent] = (
        [TextContent(text=result.output)] if isinstance(result.output, str) else result.output
    )
    return ToolResultMessage(
        id=new_id(),
        tool_call_id=call.id,
        tool_name=call.name,
        content=content,
        is_error=result.is_error,
        details=result.details,
        timestamp=time.time(),
    )


def call_locations(tool: Tool, call: ToolCall, ctx: ToolContext) -> list[Location]:
    """Where a call will touch files (empty when its arguments do not validate)."""
    if call.parse_error:
        return []
    try:
        return tool.locations(msgspec.convert(call.arguments, tool.Params, strict=False), ctx)
    except (msgspec.ValidationError, OSError, ValueError):
        return []


def usable(message: Message) -> bool:
    """Failed or empty aborted replies stay in the record but are not sent back to the model."""
    if isinstance(message, AssistantMessage):
        return message.stop_reason != "error" and bool(message.content)
    return True
