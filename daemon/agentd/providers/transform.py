"""Conversation clean-up before a request, shared by every wire format.

Providers reject conversations in which a tool call has no result or a result has no call,
and replaying a failed reply only confuses the model. :func:`prepare_messages` therefore
drops assistant messages that ended in ``error`` or ``aborted`` (or carry no content) along
with the results of their tool calls, drops results whose call is unknown, and answers every
tool call still left without a result with an error result.
"""

from __future__ import annotations

import msgspec

from agentd.protocol.content import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
)

MISSING_RESULT = "No result was recorded for this tool call; it did not run to completion."


IMAGES_FROM_TOOLS = "Images returned by the tool calls above:"
"""Leads the user message that carries tool-result images in formats whose tool results
cannot hold images (both OpenAI formats)."""


def tool_result_text(message: ToolResultMessage) -> str:
    """A tool result as plain text; attached images are announced (they follow separately)."""
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    if any(isinstance(b, ImageContent) for b in message.content):
        text = f"{text}\n(image attached below)" if text else "(image attached below)"
    return text


def prepare_messages(messages: list[Message]) -> list[Message]:
    """The conversation as it should be sent (see the module docstring), with each tool call
    and its result under the provider's own id for the call (:attr:`ToolCall.provider_id`)."""
    return _provider_ids(_complete(messages))


def _provider_ids(messages: list[Message]) -> list[Message]:
    """Calls renamed by the session (ids must be unique there) back under the provider's ids."""
    renamed: dict[str, str] = {}
    out: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            ours = {c.id: c.provider_id for c in message.tool_calls() if c.provider_id}
            if ours:
                renamed.update(ours)
                message = msgspec.structs.replace(message, content=_unrenamed(message.content))
        elif isinstance(message, ToolResultMessage) and message.tool_call_id in renamed:
            message = msgspec.structs.replace(message, tool_call_id=renamed[message.tool_call_id])
        out.append(message)
    return out


def _unrenamed(content: list[AssistantContent]) -> list[AssistantContent]:
    return [
        msgspec.structs.replace(block, id=block.provider_id, provider_id=None)
        if isinstance(block, ToolCall) and block.provider_id
        else block
        for block in content
    ]


def _complete(messages: list[Message]) -> list[Message]:
    prepared: list[Message] = []
    open_calls: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, ToolResultMessage):
            if open_calls.pop(message.tool_call_id, None) is not None:
                prepared.append(message)
            continue
        _close_calls(open_calls, prepared)
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted") or not message.content:
                continue
            open_calls = {call.id: call for call in message.tool_calls()}
        prepared.append(message)
    _close_calls(open_calls, prepared)
    return prepared


def _close_calls(open_calls: dict[str, ToolCall], prepared: list[Message]) -> None:
    """Append an error result for every call still waiting for one."""
    for call in open_calls.values():
        prepared.append(
            ToolResultMessage(
                id=f"missing-{call.id}",
                tool_call_id=call.id,
                tool_name=call.name,
                content=[TextContent(text=MISSING_RESULT)],
                is_error=True,
            )
        )
    open_calls.clear()
