"""ACP content blocks (prompts, messages) and tool-call content, locations and fields."""

from __future__ import annotations

from typing import Any, Literal

from agentd.protocol.acp.base import Acp

# --- content blocks ------------------------------------------------------------------------


class TextBlock(Acp, tag="text", tag_field="type"):
    text: str


class ImageBlock(Acp, tag="image", tag_field="type"):
    data: str
    mime_type: str
    uri: str | None = None


class AudioBlock(Acp, tag="audio", tag_field="type"):
    data: str
    mime_type: str


class ResourceLinkBlock(Acp, tag="resource_link", tag_field="type"):
    """A reference to a file or URL the agent may read itself."""

    uri: str
    name: str
    mime_type: str | None = None
    title: str | None = None
    description: str | None = None
    size: int | None = None


class ResourceContents(Acp):
    """Text or (base64) blob contents of an embedded resource; exactly one is set."""

    uri: str
    text: str | None = None
    blob: str | None = None
    mime_type: str | None = None


class ResourceBlock(Acp, tag="resource", tag_field="type"):
    """A resource embedded in the prompt (an @-mentioned file with its text)."""

    resource: ResourceContents


ContentBlock = TextBlock | ImageBlock | AudioBlock | ResourceLinkBlock | ResourceBlock


# --- tool calls ----------------------------------------------------------------------------

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]


class ContentItem(Acp, tag="content", tag_field="type"):
    content: ContentBlock


class DiffItem(Acp, tag="diff", tag_field="type"):
    """A file change; ``old_text`` None means the file is new."""

    path: str
    new_text: str
    old_text: str | None = None


class TerminalItem(Acp, tag="terminal", tag_field="type"):
    terminal_id: str


ToolCallContent = ContentItem | DiffItem | TerminalItem


class ToolCallLocation(Acp):
    path: str
    line: int | None = None


class ToolCallFields(Acp):
    """The fields of ``tool_call_update`` (also the ``toolCall`` of a permission request):
    only the id is required; fields given replace the client's."""

    tool_call_id: str
    title: str | None = None
    kind: ToolKind | None = None
    status: ToolCallStatus | None = None
    content: list[ToolCallContent] | None = None
    locations: list[ToolCallLocation] | None = None
    raw_input: dict[str, Any] | None = None
    raw_output: dict[str, Any] | None = None
