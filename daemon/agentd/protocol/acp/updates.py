"""The ``session/update`` notification and its variants."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentd.protocol.acp.base import Acp
from agentd.protocol.acp.content import (
    ContentBlock,
    ToolCallContent,
    ToolCallFields,
    ToolCallLocation,
    ToolCallStatus,
    ToolKind,
)
from agentd.protocol.acp.methods import ConfigOption

# --- session/update ------------------------------------------------------------------------

_UPDATE = "sessionUpdate"


class UserMessageChunk(Acp, tag="user_message_chunk", tag_field=_UPDATE):
    content: ContentBlock
    message_id: str | None = None


class AgentMessageChunk(Acp, tag="agent_message_chunk", tag_field=_UPDATE):
    content: ContentBlock
    message_id: str | None = None


class AgentThoughtChunk(Acp, tag="agent_thought_chunk", tag_field=_UPDATE):
    content: ContentBlock
    message_id: str | None = None


class ToolCallStart(Acp, tag="tool_call", tag_field=_UPDATE):
    """A new tool call (``tool_call``)."""

    tool_call_id: str
    title: str
    kind: ToolKind = "other"
    status: ToolCallStatus = "pending"
    content: list[ToolCallContent] = msgspec.field(default_factory=list)
    locations: list[ToolCallLocation] = msgspec.field(default_factory=list)
    raw_input: dict[str, Any] | None = None


class ToolCallProgress(ToolCallFields, tag="tool_call_update", tag_field=_UPDATE):
    """A change to a tool call (``tool_call_update``)."""


class CurrentModeUpdate(Acp, tag="current_mode_update", tag_field=_UPDATE):
    current_mode_id: str


class ConfigOptionUpdate(Acp, tag="config_option_update", tag_field=_UPDATE):
    config_options: list[ConfigOption]


class SessionInfoUpdate(Acp, tag="session_info_update", tag_field=_UPDATE):
    title: str | None = None
    updated_at: str | None = None


class Cost(Acp):
    amount: float
    currency: str


class UsageUpdate(Acp, tag="usage_update", tag_field=_UPDATE):
    """Context tokens in use, the model's window, and the session's cumulative cost."""

    used: int
    size: int
    cost: Cost | None = None


class AcpPlanEntry(Acp, omit_defaults=False):
    """One step of an ACP ``plan`` (every field required by ACP)."""

    content: str
    priority: Literal["high", "medium", "low"]
    status: Literal["pending", "in_progress", "completed"]


class PlanUpdate(Acp, tag="plan", tag_field=_UPDATE):
    """The agent's whole plan (``plan``): replaces the one shown before."""

    entries: list[AcpPlanEntry]


class UnstructuredCommandInput(Acp):
    """A command's input: the text typed after its name; ``hint`` is shown until typed."""

    hint: str


class AvailableCommand(Acp):
    """A command the editor offers as ``/name`` (the prompt text starts with it)."""

    name: str
    description: str
    input: UnstructuredCommandInput | None = None


class AvailableCommandsUpdate(Acp, tag="available_commands_update", tag_field=_UPDATE):
    """The session's commands, all of them (replaces the ones offered before)."""

    available_commands: list[AvailableCommand]


SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | PlanUpdate
    | AvailableCommandsUpdate
)


class SessionNotification(Acp):
    """Params of the ``session/update`` notification."""

    session_id: str
    update: SessionUpdate
