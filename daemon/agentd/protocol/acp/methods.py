"""Params and results of the ACP methods agentd serves and calls (initialize, sessions,
modes and config options, permissions, files)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentd.protocol.acp.base import (
    Acp,
    Always,
    Supported,
)
from agentd.protocol.acp.content import (
    ContentBlock,
    ToolCallFields,
)

# --- initialize ----------------------------------------------------------------------------


class Implementation(Acp):
    name: str
    version: str = ""
    title: str | None = None


class FileSystemCapabilities(Always):
    read_text_file: bool = False
    write_text_file: bool = False


class ClientCapabilities(Acp):
    """What the editor can do. ``meta`` (``_meta``): ``{"cancelRequest": true}`` asks for
    ``$/cancel_request`` notifications when agentd withdraws a request it sent (not sent
    otherwise: the method is not in every client)."""

    fs: FileSystemCapabilities = msgspec.field(default_factory=FileSystemCapabilities)
    terminal: bool = False
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


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
    fork: Supported | None = None
    """``session/fork`` (unstable in ACP)."""
    delete: Supported | None = None


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


class ForkSessionParams(Always):
    """``session/fork`` (unstable in ACP): a new session with ``session_id``'s history."""

    session_id: str
    cwd: str
    mcp_servers: list[Any] = msgspec.field(default_factory=list)
    additional_directories: list[str] = msgspec.field(default_factory=list)


class ForkSessionResult(Acp):
    session_id: str
    modes: SessionModeState | None = None
    config_options: list[ConfigOption] | None = None


class SessionIdParams(Acp):
    """``session/cancel``, ``session/close`` and ``session/delete``."""

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
