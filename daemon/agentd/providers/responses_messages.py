"""Our conversation in the OpenAI Responses ``input`` format (stateless: ``store: false``).

- the system prompt goes in the request's ``instructions``, not here;
- user text and images become a ``user`` message of ``input_text`` / ``input_image`` parts
  (images as ``data:`` URLs);
- an assistant message becomes, in order: its ``reasoning`` items (only those this format
  produced: their signature holds the item id and ``encrypted_content``), one ``assistant``
  message of ``output_text`` parts, and one ``function_call`` item per tool call;
- tool results become ``function_call_output`` items; images in tool results (which that item
  cannot carry) follow the run of outputs as one ``user`` message.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agentd.protocol.content import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from agentd.providers.transform import IMAGES_FROM_TOOLS, prepare_messages, tool_result_text


class ReasoningToken(msgspec.Struct):
    """What a Responses reasoning item needs to go back to the API, kept as the signature."""

    id: str
    encrypted_content: str | None = None


def encode_reasoning_token(item_id: str, encrypted: str | None) -> str:
    """The opaque ``ThinkingContent.signature`` of a reasoning item."""
    return msgspec.json.encode(ReasoningToken(item_id, encrypted)).decode()


def decode_reasoning_token(signature: str | None) -> ReasoningToken | None:
    """The reasoning item behind a signature, or None when another format wrote it."""
    if not signature or not signature.startswith("{"):
        return None
    try:
        return msgspec.json.decode(signature, type=ReasoningToken)
    except msgspec.DecodeError:
        return None


def to_responses_input(messages: list[Message]) -> list[dict[str, Any]]:
    """The ``input`` array of a Responses request."""
    wire: list[dict[str, Any]] = []
    pending_images: list[ImageContent] = []
    for message in prepare_messages(messages):
        if isinstance(message, ToolResultMessage):
            wire.append(_function_output(message))
            pending_images += [b for b in message.content if isinstance(b, ImageContent)]
            continue
        _flush_images(pending_images, wire)
        if isinstance(message, UserMessage):
            wire.append({"role": "user", "content": _user_parts(message.content)})
        else:
            wire.extend(_assistant_items(message))
    _flush_images(pending_images, wire)
    return wire


def _user_parts(blocks: list[UserContent]) -> list[dict[str, Any]]:
    parts = [_part(block) for block in blocks]
    return parts or [{"type": "input_text", "text": ""}]


def _part(block: UserContent) -> dict[str, Any]:
    if isinstance(block, TextContent):
        return {"type": "input_text", "text": block.text}
    return {"type": "input_image", "image_url": f"data:{block.mime_type};base64,{block.data}"}


def _assistant_items(message: AssistantMessage) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            token = decode_reasoning_token(block.signature)
            if token is not None:
                items.append(_reasoning_item(token, block.thinking))
    for server_call in message.server_tool_calls():
        if server_call.api == "openai-responses":  # the provider's own item, sent back as is
            items.extend(server_call.raw)
    text = message.text()
    if text:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        items.append({"type": "message", "role": "assistant", "content": content})
    for call in message.tool_calls():
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": msgspec.json.encode(call.arguments).decode(),
            }
        )
    return items


def _reasoning_item(token: ReasoningToken, summary: str) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning", "id": token.id, "summary": []}
    if summary:
        item["summary"] = [{"type": "summary_text", "text": summary}]
    if token.encrypted_content:
        item["encrypted_content"] = token.encrypted_content
    return item


def _function_output(message: ToolResultMessage) -> dict[str, Any]:
    text = tool_result_text(message)
    return {"type": "function_call_output", "call_id": message.tool_call_id, "output": text}


def _flush_images(images: list[ImageContent], wire: list[dict[str, Any]]) -> None:
    if images:
        parts = [{"type": "input_text", "text": IMAGES_FROM_TOOLS}] + [_part(i) for i in images]
        wire.append({"role": "user", "content": parts})
        images.clear()
