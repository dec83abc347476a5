"""Our conversation in the Anthropic Messages format.

- the system prompt is the top-level ``system`` (one text block, marked for prompt caching);
- user text and images become ``text`` and base64 ``image`` blocks (empty text is dropped:
  the API refuses empty text blocks);
- assistant messages become ``thinking`` (only with a signature: unsigned reasoning from
  another provider cannot be sent back), ``redacted_thinking`` (its data unchanged), ``text``
  and ``tool_use`` blocks;
- tool results become ``tool_result`` blocks; consecutive user-side messages (a run of tool
  results, then perhaps a steering message) are merged into one ``user`` message;
- tool call ids are reduced to the characters the API accepts (``[a-zA-Z0-9_-]``, 64 max);
- the last block of the conversation is marked for prompt caching as well.
"""

from __future__ import annotations

import re
from typing import Any

from agentd.protocol.content import (
    AssistantMessage,
    ImageContent,
    Message,
    ServerToolCall,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from agentd.providers.transform import prepare_messages

_BAD_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_CACHE = {"type": "ephemeral"}
_CACHEABLE = frozenset({"text", "image", "tool_result", "tool_use"})


def to_anthropic_system(system_prompt: str) -> list[dict[str, Any]]:
    """The ``system`` field: one cached text block, or nothing."""
    if not system_prompt:
        return []
    return [{"type": "text", "text": system_prompt, "cache_control": _CACHE}]


def to_anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """The ``messages`` array of a Messages request."""
    wire: list[dict[str, Any]] = []
    for message in prepare_messages(messages):
        if isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message)
            role = "assistant"
        elif isinstance(message, UserMessage):
            blocks = _user_blocks(message.content) or [{"type": "text", "text": "(empty)"}]
            role = "user"
        else:
            blocks = [_tool_result(message)]
            role = "user"
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    _mark_cache(wire)
    return wire


def tool_id(call_id: str) -> str:
    """A tool call id the API accepts."""
    return (_BAD_ID_CHARS.sub("_", call_id) or "call")[:64]


def _user_blocks(content: list[UserContent]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        else:
            blocks.append(_image(block))
    return blocks


def _image(block: ImageContent) -> dict[str, Any]:
    source = {"type": "base64", "media_type": block.mime_type, "data": block.data}
    return {"type": "image", "source": source}


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.redacted and block.signature:
                blocks.append({"type": "redacted_thinking", "data": block.signature})
            elif block.signature:
                blocks.append(
                    {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
                )
        elif isinstance(block, TextContent):
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ServerToolCall):
            if block.api == "anthropic":  # the provider's own blocks, sent back unchanged
                blocks.extend(block.raw)
        elif isinstance(block, ToolCall):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": tool_id(block.id),
                    "name": block.name,
                    "input": block.arguments,
                }
            )
    return blocks


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    content = _user_blocks(message.content) or [{"type": "text", "text": "(no output)"}]
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": tool_id(message.tool_call_id),
        "content": content,
    }
    if message.is_error:
        result["is_error"] = True
    return result


def _mark_cache(wire: list[dict[str, Any]]) -> None:
    if wire and wire[-1]["content"]:
        last = wire[-1]["content"][-1]
        if last.get("type") in _CACHEABLE:
            last["cache_control"] = _CACHE
