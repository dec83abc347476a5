"""Wire types of the Agent Client Protocol (ACP, protocol version 1), as msgspec Structs.

``agentd acp`` speaks ACP to editors (Zed, JetBrains IDEs, CodeCompanion, avante…): JSON-RPC
2.0, one JSON object per line, camelCase keys, snake_case tags. Only the parts agentd uses are
modelled. Decoding is lenient, as the specification asks: unknown fields (``_meta``, additions
of later minor versions) are ignored. Encoding leaves out fields at their default, which for
ACP means "not given". The tests check every Struct here against the official JSON schema
(``tests/fixtures/acp/``).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

ACP_PROTOCOL_VERSION = 1


class Acp(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """Base of every ACP value: camelCase, fields at their default left out."""


class Always(Acp, omit_defaults=False):
    """Base of ACP values whose every field is always written (capability objects)."""


class Supported(Acp):
    """An empty object: "supported" in ACP's capability records."""


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

# --- initialize ----------------------------------------------------------------------------


class Implementation(Acp):
    name: str
    version: str = ""
    title: str | None = None


class FileSystemCapabilities(Always):
    read_text_file: bool = False
    write_text_file: bool = False


class ClientCapabilities(Acp):
    fs: FileSystemCapabilities = msgspec.field(default_factory=FileSystemCapabilities)
    terminal: bool = False


class InitializeParams(Acp):
    protocol_version: int
    client_capabilities: ClientCapabilities = msgspec.field(default_factory=ClientCapabilities)
    client_info: Implementation | None = None


class PromptCapabilities(Always):
    image: bool = False
    audio: bool = False
    embedded_context: bool = False


class McpCapabilities(Always):
    http: bool = False
    sse: bool = False


class SessionCapabilities(Acp):
    list: Supported | None = None
    resume: Supported | None = None
    close: Supported | None = None


class AgentCapabilities(Always):
    load_session: bool = False
    prompt_capabilities: PromptCapabilities = msgspec.field(default_factory=PromptCapabilities)
    mcp_capabilities: McpCapabilities = msgspec.field(default_factory=McpCapabilities)
    session_capabilities: SessionCapabilities = msgspec.field(default_factory=SessionCapabilities)


class AuthMethod(Acp):
    id: str
    name: str
    description: str | None = None


class InitializeResult(Always):
    protocol_version: int
    agent_capabilities: AgentCapabilities
    auth_methods: list[AuthMethod]
    agent_info: Implementation


class AuthenticateParams(Acp):
    method_id: str


# --- modes and config options --------------------------------------------------------------


class SessionMode(Acp):
    id: str
    name: str
    description: str | None = None


class SessionModeState(Always):
    current_mode_id: str
    available_modes: list[SessionMode]


class ConfigSelectOption(Acp):
    value: str
    name: str
    description: str | None = None


class ConfigOption(Acp, tag="select", tag_field="type"):
    """A dropdown in the editor (the only option type agentd offers)."""

    id: str
    name: str
    current_value: str
    options: list[ConfigSelectOption]
    description: str | None = None
    category: str | None = None


# --- sessions ------------------------------------------------------------------------------


class NewSessionParams(Always):
    """``mcpServers`` is required by the spec; a missing one is read as an empty list."""

    cwd: str
    mcp_servers: list[Any] = msgspec.field(default_factory=list)
    additional_directories: list[str] = msgspec.field(default_factory=list)


class NewSessionResult(Acp):
    session_id: str
    modes: SessionModeState | None = None
    config_options: list[ConfigOption] | None = None


class LoadSessionParams(Always):
    """``session/load`` and ``session/resume``."""

    session_id: str
    cwd: str
    mcp_servers: list[Any] = msgspec.field(default_factory=list)


class LoadSessionResult(Acp):
    modes: SessionModeState | None = None
    config_options: list[ConfigOption] | None = None


class SessionIdParams(Acp):
    """``session/cancel`` and ``session/close``."""

    session_id: str


class ListSessionsParams(Acp):
    cwd: str | None = None
    cursor: str | None = None


class SessionInfo(Acp):
    session_id: str
    cwd: str
    title: str | None = None
    updated_at: str | None = None


class ListSessionsResult(Acp):
    sessions: list[SessionInfo]
    next_cursor: str | None = None


class PromptParams(Acp):
    session_id: str
    prompt: list[ContentBlock]


StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


class PromptResult(Always):
    stop_reason: StopReason


class SetModeParams(Acp):
    session_id: str
    mode_id: str


class SetConfigOptionParams(Acp):
    session_id: str
    config_id: str
    value: str | bool


class SetConfigOptionResult(Always):
    config_options: list[ConfigOption]


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
)


class SessionNotification(Acp):
    """Params of the ``session/update`` notification."""

    session_id: str
    update: SessionUpdate


# --- agent -> client requests --------------------------------------------------------------

PermissionOptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class PermissionOption(Acp):
    option_id: str
    name: str
    kind: PermissionOptionKind


class RequestPermissionParams(Acp):
    session_id: str
    tool_call: ToolCallFields
    options: list[PermissionOption]


class SelectedOutcome(Acp, tag="selected", tag_field="outcome"):
    option_id: str


class CancelledOutcome(Acp, tag="cancelled", tag_field="outcome"):
    pass


class RequestPermissionResult(Acp):
    outcome: SelectedOutcome | CancelledOutcome


class ReadTextFileParams(Acp):
    session_id: str
    path: str
    line: int | None = None
    limit: int | None = None


class ReadTextFileResult(Acp):
    content: str


class WriteTextFileParams(Acp):
    session_id: str
    path: str
    content: str
