"""Conversation content: the messages the model sees, as stored and as sent on the wire.

A conversation is a list of :data:`Message` values: user prompts, assistant replies (text,
thinking and tool calls) and tool results. The same Structs are written to session files,
carried by ``message_end`` events and handed to providers, which translate them into their
own request formats.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentd.protocol.base import Wire
from agentd.protocol.tool_details import ToolDetails
from agentd.protocol.usage import Usage as Usage  # re-exported: the conversation's usage type


class Citation(Wire):
    """A source the model cited for a passage of its text (a provider-side web search's
    result): the page's ``url`` and ``title`` and the ``cited_text`` it relied on."""

    url: str
    title: str = ""
    cited_text: str = ""


class TextContent(Wire, tag="text", tag_field="type"):
    """A block of plain text; ``citations``: the sources a provider-side search gave for it
    (assistant text only)."""

    text: str
    citations: list[Citation] = msgspec.field(default_factory=list)


class ImageContent(Wire, tag="image", tag_field="type"):
    """An image, base64-encoded."""

    data: str
    mime_type: str


class ThinkingContent(Wire, tag="thinking", tag_field="type"):
    """Model reasoning. ``signature`` is the provider's opaque token, sent back unchanged.

    ``redacted``: the provider sent the reasoning encrypted (Anthropic ``redacted_thinking``);
    ``thinking`` is then empty and ``signature`` holds the encrypted data, sent back unchanged.
    """

    thinking: str
    signature: str | None = None
    redacted: bool = False


class ToolCall(Wire, tag="tool_call", tag_field="type"):
    """A tool call issued by the model.

    ``arguments`` is the decoded JSON object. When the model produced arguments that are not a
    JSON object, ``arguments`` is empty and ``parse_error`` says what was wrong; the loop then
    answers the call with an error result instead of running the tool.

    ``id`` is unique within the session (events, results and clients use it); when the
    provider's own id for the call was already taken (models repeat ids), the provider's is
    kept in ``provider_id`` and used only in requests back to that provider.
    """

    id: str
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    parse_error: str | None = None
    provider_id: str | None = None


class ServerToolCall(Wire, tag="server_tool_call", tag_field="type"):
    """A tool the provider ran on its side while replying (its web search): nothing runs
    here. ``arguments`` as the model gave them, ``result`` the text clients show, ``details``
    typed for UIs (:class:`WebSearchDetails`), ``is_error`` when the provider's tool failed.

    ``api`` is the wire format of ``raw``: the provider's own blocks for this call and its
    result, sent back unchanged to a provider of that format (dropped for any other)."""

    id: str
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    result: str = ""
    is_error: bool = False
    details: ToolDetails | None = None
    api: str = ""
    raw: list[dict[str, Any]] = msgspec.field(default_factory=list)


UserContent = TextContent | ImageContent
AssistantContent = TextContent | ThinkingContent | ToolCall | ServerToolCall

StopReason = Literal["stop", "tool_use", "length", "error", "aborted"]
"""Why an assistant message ended: a natural stop, tool calls to run, the output token limit,
a provider failure, or a cancel."""


class UserMessage(Wire, tag="user", tag_field="role"):
    """A prompt, steering or follow-up message from the user.

    ``command``: the custom command the user typed (``/review a.py``) when ``content`` is its
    expansion (what the model reads); clients show the command, the expansion on demand.
    """

    id: str
    content: list[UserContent]
    timestamp: float
    command: str | None = None


class AssistantMessage(Wire, tag="assistant", tag_field="role"):
    """One complete reply of the model. ``error_message`` is set when ``stop_reason`` is error."""

    id: str
    content: list[AssistantContent]
    provider: str
    model: str
    usage: Usage = msgspec.field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    timestamp: float = 0.0

    def tool_calls(self) -> list[ToolCall]:
        """The tool calls of this message, in the order the model issued them."""
        return [block for block in self.content if isinstance(block, ToolCall)]

    def server_tool_calls(self) -> list[ServerToolCall]:
        """The tools the provider ran on its side during this reply, in order."""
        return [block for block in self.content if isinstance(block, ServerToolCall)]

    def text(self) -> str:
        """All text blocks joined (no thinking, no tool calls)."""
        return "".join(block.text for block in self.content if isinstance(block, TextContent))


class ToolResultMessage(Wire, tag="tool_result", tag_field="role"):
    """The result of one tool call. ``content`` is what the model sees; ``details`` is for UIs."""

    id: str
    tool_call_id: str
    tool_name: str
    content: list[UserContent]
    is_error: bool = False
    details: ToolDetails | None = None
    timestamp: float = 0.0


Message = UserMessage | AssistantMessage | ToolResultMessage
