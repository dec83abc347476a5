"""Our conversation in the Chat Completions message format.

- the system prompt is the first ``system`` message;
- user text is a string; with images, a list of ``text`` and ``image_url`` parts whose URLs
  are ``data:`` URLs;
- assistant messages carry their text as ``content`` and their tool calls with JSON-encoded
  ``arguments``; thinking is not sent back (the format has no place for it);
- tool results are ``tool`` messages; images in tool results (which ``tool`` messages cannot
  carry) follow the run of tool messages as one ``user`` message.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentd.protocol.content import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from agentd.providers.transform import IMAGES_FROM_TOOLS, prepare_messages, tool_result_text


def to_openai_messages(system_prompt: str, messages: list[Message]) -> list[dict[str, Any]]:
    """The ``messages`` array of a Chat Completions request."""
    wire: list[dict[str, Any]] = []
    if system_prompt:
        wire.append({"role": "system", "content": system_prompt})
    pending_images: list[ImageContent] = []
    for message in prepare_messages(messages):
        if isinstance(message, ToolResultMessage):
            wire.append(_tool_message(message))
            pending_images += [b for b in message.content if isinstance(b, ImageContent)]
            continue
        _flush_images(pending_images, wire)
        if isinstance(message, UserMessage):
            wire.append({"role": "user", "content": _user_content(message.content)})
        else:
            wire.append(_assistant_message(message))
    _flush_images(pending_images, wire)
    return wire


def _user_content(blocks: list[UserContent]) -> str | list[dict[str, Any]]:
    if all(isinstance(block, TextContent) for block in blocks):
        return "".join(block.text for block in blocks if isinstance(block, TextContent))
    return [_part(block) for block in blocks]


def _part(block: UserContent) -> dict[str, Any]:
    if isinstance(block, TextContent):
        return {"type": "text", "text": block.text}
    url = f"data:{block.mime_type};base64,{block.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _assistant_message(message: AssistantMessage) -> dict[str, Any]:
    text = message.text()
    wire: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = message.tool_calls()
    if calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": msgspec.json.encode(call.arguments).decode(),
                },
            }
            for call in calls
        ]
    elif not text:
        wire["content"] = ""
    return wire


def _tool_message(message: ToolResultMessage) -> dict[str, Any]:
    text = tool_result_text(message)
    return {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}


def _flush_images(images: list[ImageContent], wire: list[dict[str, Any]]) -> None:
    if images:
        parts = [{"type": "text", "text": IMAGES_FROM_TOOLS}] + [_part(i) for i in images]
        wire.append({"role": "user", "content": parts})
        images.clear()
