"""Params and results of every JSON-RPC method (the method table is in ``table.py``).

Naming: ``XParams`` / ``XResult`` per method. Params refuse unknown fields; results may grow
new optional fields, which clients ignore.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from agentd.protocol.base import Params, Result
from agentd.protocol.client_requests import (
    ReadTextFileParams as ReadTextFileParams,
)
from agentd.protocol.client_requests import (
    ReadTextFileResult as ReadTextFileResult,
)
from agentd.protocol.client_requests import (
    RequestPermissionParams as RequestPermissionParams,
)
from agentd.protocol.client_requests import (
    RequestPermissionResult as RequestPermissionResult,
)
from agentd.protocol.client_requests import (
    WriteTextFileParams as WriteTextFileParams,
)
from agentd.protocol.client_requests import (
    WriteTextFileResult as WriteTextFileResult,
)
from agentd.protocol.commands import (
    SessionCommandsParams as SessionCommandsParams,
)
from agentd.protocol.commands import (
    SessionCommandsResult as SessionCommandsResult,
)
from agentd.protocol.content import ImageContent, Message, Usage
from agentd.protocol.events import HookResult, PermissionOption, PlanItem, RunStopReason
from agentd.protocol.events import PermissionMode as PermissionMode
from agentd.protocol.lifecycle import (
    PROTOCOL_VERSION as PROTOCOL_VERSION,
)
from agentd.protocol.lifecycle import (
    ClientCapabilities as ClientCapabilities,
)
from agentd.protocol.lifecycle import (
    ClientInfo as ClientInfo,
)
from agentd.protocol.lifecycle import (
    DaemonStatusResult as DaemonStatusResult,
)
from agentd.protocol.lifecycle import (
    FileAccessCapabilities as FileAccessCapabilities,
)
from agentd.protocol.lifecycle import (
    InitializeParams as InitializeParams,
)
from agentd.protocol.lifecycle import (
    InitializeResult as InitializeResult,
)
from agentd.protocol.lifecycle import (
    SecurityStatus as SecurityStatus,
)
from agentd.protocol.lifecycle import (
    ServerCapabilities as ServerCapabilities,
)
from agentd.protocol.lifecycle import (
    ServerInfo as ServerInfo,
)
from agentd.protocol.lifecycle import (
    WebOpenParams as WebOpenParams,
)
from agentd.protocol.lifecycle import (
    WebOpenResult as WebOpenResult,
)
from agentd.protocol.mcp import (
    McpListParams as McpListParams,
)
from agentd.protocol.mcp import (
    McpListResult as McpListResult,
)
from agentd.protocol.mcp import McpLoginFinishParams as McpLoginFinishParams
from agentd.protocol.mcp import McpLoginParams as McpLoginParams
from agentd.protocol.mcp import McpLoginResult as McpLoginResult
from agentd.protocol.mcp import McpLogoutParams as McpLogoutParams
from agentd.protocol.mcp import McpLogoutResult as McpLogoutResult
from agentd.protocol.mcp import McpServerParam
from agentd.protocol.processes import KillProcessParams as KillProcessParams
from agentd.protocol.processes import ProcessesParams as ProcessesParams
from agentd.protocol.processes import ProcessesResult as ProcessesResult
from agentd.protocol.processes import ProcessInfo
from agentd.protocol.questions import (
    AskQuestionParams as AskQuestionParams,
)
from agentd.protocol.questions import (
    AskQuestionResult as AskQuestionResult,
)
from agentd.protocol.questions import (
    QuestionAnswerParams as QuestionAnswerParams,
)
from agentd.protocol.rewind import (
    SessionRewindParams as SessionRewindParams,
)
from agentd.protocol.rewind import (
    SessionRewindResult as SessionRewindResult,
)
from agentd.protocol.session_file import SessionSummary
from agentd.protocol.skills import (
    SessionSkillsParams as SessionSkillsParams,
)
from agentd.protocol.skills import (
    SessionSkillsResult as SessionSkillsResult,
)
from agentd.protocol.skills import (
    SkillCheckParams as SkillCheckParams,
)
from agentd.protocol.skills import (
    SkillCheckResult as SkillCheckResult,
)

# --- sessions and runs ----------------------------------------------------------------------

RunPhase = Literal["idle", "starting", "running", "compacting", "cancelling", "rewinding"]
"""What a session is doing: ``idle``; ``starting`` (a prompt was accepted, its run has not
begun); ``running`` (the agent loop runs: model calls, tools); ``compacting`` (its context is
being summarised, by ``session/compact`` or inside a run); ``cancelling`` (a cancel was asked,
the run is ending); ``rewinding`` (``session/rewind`` is restoring files). Every phase but
``idle`` is busy: a prompt, note, branch or compaction is
refused (``SessionBusy``)."""


class SessionNewParams(Params):
    """``session/new``: open a session. Events go to the creating connection.

    Unset fields come from the configuration. ``sandbox: "workspace"`` confines the file
    tools to ``cwd`` (opened beneath it, race-free) and, where the kernel has Landlock, what
    bash writes (``daemon/status`` says; else a ``session_warning``). The effective permission mode
    and sandbox and the given overrides are stored in the session file, so the session keeps
    them when it is loaded again.

    ``providerEnv``: the client's provider variables (``LLM_*``, ``OPENAI_*``, ``ANTHROPIC_*``,
    ``*_API_KEY``; others are ignored). When given, they replace the daemon's own provider
    variables for this session; they are held in memory only, never written, and never reach
    bash. Refused over TCP.

    ``mcpServers``: MCP servers for this session only, in the ACP shape (merged by name over
    the configured ones; see docs/mcp.md). Held in memory only.
    """

    cwd: str
    provider: str | None = None
    model: str | None = None
    system_prompt: str | None = None
    tools: list[str] | None = None
    permission_mode: PermissionMode | None = None
    session_id: str | None = None
    title: str | None = None
    max_turns: int | None = None
    base_url: str | None = None
    sandbox: Literal["workspace", "none"] | None = None
    provider_env: dict[str, str] | None = None
    mcp_servers: list[McpServerParam] | None = None


class SessionInfo(Result):
    """A session's identity and settings.

    ``warnings`` are problems with the configuration the session was built from (an ignored
    project file, settings an untrusted project file may not change). ``untrusted_config`` is
    the project file whose settings were ignored, or the ``.mcp.json`` whose servers were not
    started, because its folder is not trusted or it changed since (a client may offer to
    trust the folder, then create the session again). ``parent_session_id``
    and ``parent_tool_call_id`` are set on a subagent's session: the session and the
    ``task`` call that started it.
    """

    session_id: str
    cwd: str
    provider: str
    model: str
    permission_mode: PermissionMode
    title: str | None = None
    path: str | None = None
    warnings: list[str] = msgspec.field(default_factory=list)
    untrusted_config: str | None = None
    parent_session_id: str | None = None
    parent_tool_call_id: str | None = None


TraceParent = Annotated[
    str,
    msgspec.Meta(
        pattern="^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$",
        description="a W3C traceparent: 00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>",
    ),
]


class PromptParams(Params):
    """``session/prompt``: run the agent on ``text``; resolves when the run ends.

    ``max_turns`` limits this run only; without it the session's limit applies.
    ``max_cost`` (US dollars) and ``max_tokens`` (all tokens of the run's model calls) cap its
    spending: the run stops with ``budget`` before a model call that would pass a cap.
    ``max_cost`` needs the model's prices (-32005 when they are unknown).
    ``traceparent`` (a W3C Trace Context header value, ``00-TRACEID-SPANID-FLAGS``) makes the
    run's telemetry span a child of that span, so a driver (a batch) links the runs it
    starts to its own trace; ignored while telemetry is off.
    """

    session_id: str
    text: str
    images: list[ImageContent] = msgspec.field(default_factory=list)
    max_turns: Annotated[int, msgspec.Meta(ge=1)] | None = None
    max_cost: Annotated[float, msgspec.Meta(gt=0)] | None = None
    max_tokens: Annotated[int, msgspec.Meta(ge=1)] | None = None
    traceparent: TraceParent | None = None


class RefusedCall(Result):
    """A tool call of the run that was not allowed to run (the policy or the user refused)."""

    tool_call_id: str
    name: str
    reason: str


class PromptResult(Result):
    """How the run ended. A cancel is ``cancelled``, never an error. ``permissions_refused``
    lists the tool calls refused permission during the run (the model got the refusal as the
    call's error result), in order."""

    stop_reason: RunStopReason
    turns: int
    usage: Usage
    cost: float
    error: str | None = None
    permissions_refused: list[RefusedCall] = msgspec.field(default_factory=list)


class SessionTextParams(Params):
    """``session/steer`` / ``session/followUp``: queue a message for a running session."""

    session_id: str
    text: str


class SessionNoteParams(Params):
    """``session/note``: record ``text`` in an idle session as a user message, without a run.

    For what the user did outside the agent (a shell command and its output): it is kept in
    the session file, sent to subscribers as ``message_start``/``message_end`` events, and read
    by the model with the next prompt. Refused with -32002 while a run is in progress.
    """

    session_id: str
    text: str


class SessionIdParams(Params):
    """Params naming one session."""

    session_id: str


class CancelResult(Result):
    """``session/cancel``: whether a run was stopped, and the queued messages dropped."""

    cancelled: bool
    dropped: list[str] = msgspec.field(default_factory=list)


class SessionStateResult(Result):
    """``session/state``."""

    session_id: str
    status: Literal["idle", "running"]
    """``idle`` when ``phase`` is, else ``running``."""
    phase: RunPhase
    provider: str
    model: str
    permission_mode: PermissionMode
    steering: list[str]
    follow_up: list[str]
    usage: Usage
    message_count: int
    title: str | None = None
    plan: list[PlanItem] = msgspec.field(default_factory=list)
    """The agent's current plan (its latest ``todo`` call on this branch); empty: none."""
    processes: list[ProcessInfo] = msgspec.field(default_factory=list)
    """The session's background processes still running (``session/processes`` lists the
    ended ones too)."""


MAX_MESSAGES_PAGE = 1000
"""Most messages in one ``session/messages`` page (and the default ``limit``)."""
MAX_MESSAGES_PAGE_BYTES = 2 * 1024 * 1024
"""A ``session/messages`` page stops before its messages pass this much JSON."""


class MessagesParams(Params):
    """``session/messages``: one page of the conversation on the current branch, oldest
    message first.

    ``before``: the branch index (0-based) just past the page (default: the end, so the newest
    page); ``limit``: most messages in the page (1 to 1000; default 1000). A page also stops
    before it would pass 2 MiB of JSON (it always holds one message at least).
    """

    session_id: str
    limit: int = MAX_MESSAGES_PAGE
    before: int | None = None


class HookBlock(Result):
    """A hook that blocked something (its ``hook_result`` with decision ``block``), placed in
    the conversation: it came after the message ``after_message_id`` (None: before the
    first message). ``entry_id`` is its session entry."""

    entry_id: str
    after_message_id: str | None
    hook: HookResult


class MessagesResult(Result):
    """``session/messages``: a page of the conversation on the session's current branch.

    ``start`` is the branch index of ``messages[0]`` and ``total`` the branch's length: while
    ``start`` is above 0, ``before: start`` asks for the page before this one. ``hook_blocks``:
    the hooks that blocked a prompt or a tool call among this page's messages (each placed
    after one of them, or before the first message on the first page), so a reopened chat
    shows them where they happened.
    """

    messages: list[Message]
    start: int
    total: int
    hook_blocks: list[HookBlock] = msgspec.field(default_factory=list)


class SetModelParams(Params):
    """``session/setModel``: switch provider and/or model for the next LLM call.

    ``providerEnv`` (as for ``session/new``) replaces the session's provider environment."""

    session_id: str
    model: str
    provider: str | None = None
    provider_env: dict[str, str] | None = None


class SetPermissionModeParams(Params):
    """``session/setPermissionMode``: the mode for the next tool calls (kept in the file)."""

    session_id: str
    mode: PermissionMode


class ModelInfo(Result):
    """One configured model."""

    provider: str
    model: str
    context_window: int | None = None


class ModelsListParams(Params):
    """``models/list``: the models the configuration for ``cwd`` offers (the project's
    ``.agentd.toml`` above it, the user file, the environment); without ``cwd``, the daemon's
    own working directory. ``providerEnv`` as for ``session/new``."""

    cwd: str | None = None
    provider_env: dict[str, str] | None = None


class ModelsListResult(Result):
    """``models/list``."""

    models: list[ModelInfo]
    default_provider: str | None = None
    default_model: str | None = None


class OkResult(Result):
    """A plain acknowledgement."""

    ok: bool = True


# --- the session store ----------------------------------------------------------------------


class SessionListParams(Params):
    """``session/list``: newest first; ``cursor`` is the previous page's ``nextCursor``."""

    cwd: str | None = None
    limit: int = msgspec.field(default=50)
    cursor: str | None = None


class SessionListResult(Result):
    """A page of sessions."""

    sessions: list[SessionSummary]
    next_cursor: str | None = None


class SessionLoadParams(Params):
    """``session/load``: by id or file path; ``replay`` streams the history as events first.

    ``providerEnv`` (as for ``session/new``) applies when this call loads the session; a session
    already loaded keeps the environment it was loaded with. ``mcpServers`` (as for
    ``session/new``) are added to the session's servers, by name, from its next run on."""

    session_id: str | None = None
    path: str | None = None
    replay: bool = False
    provider_env: dict[str, str] | None = None
    mcp_servers: list[McpServerParam] | None = None


class SessionLoadResult(Result):
    """The loaded session, where its event stream stands, and load warnings."""

    session: SessionInfo
    last_seq: int
    message_count: int
    warnings: list[str] = msgspec.field(default_factory=list)


class SessionForkParams(Params):
    """``session/fork``: a new session branching at ``entryId`` (default: the current leaf)."""

    session_id: str
    entry_id: str | None = None
    new_session_id: str | None = None


class SessionBranchParams(Params):
    """``session/branch``: move the session's leaf to ``entryId`` inside the same file."""

    session_id: str
    entry_id: str


class SessionRenameParams(Params):
    """``session/rename``."""

    session_id: str
    title: str


class SessionDeleteParams(Params):
    """``session/delete``: refused while a run is in progress unless ``force``."""

    session_id: str
    force: bool = False


class SessionExportParams(Params):
    """``session/export``: a self-contained Markdown or HTML document."""

    session_id: str
    format: Literal["markdown", "html"] = "markdown"


class SessionExportResult(Result):
    """The exported document."""

    format: Literal["markdown", "html"]
    content: str


class SubscribeParams(Params):
    """``session/subscribe``: watch a session; replay buffered events after ``sinceSeq``."""

    session_id: str
    since_seq: int | None = None


class SubscribeResult(Result):
    """``complete`` is false when the buffer no longer reaches back: resync from messages."""

    replayed: int
    complete: bool
    last_seq: int


class CompactParams(Params):
    """``session/compact``: summarise older messages, keeping recent context."""

    session_id: str
    instructions: str | None = None


class CompactResult(Result):
    """What compaction did."""

    compacted: bool
    tokens_before: int = 0
    tokens_after: int = 0
    summary: str | None = None


class PermissionAnswerParams(Params):
    """``POST /api/permission/answer``: the user's choice for a pending tool call.

    The result is ``{"ok": false}`` when the request was already settled (another client
    answered first, the run was cancelled, or it timed out).
    """

    session_id: str
    tool_call_id: str
    outcome: PermissionOption
