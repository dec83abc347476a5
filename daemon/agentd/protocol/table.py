"""The method table: every method with its params and result types, its call and its flags.

:data:`METHODS` is the one definition of the daemon's methods. It drives the JSON-RPC
handlers (one loop over the table, :mod:`agentd.jsonrpc.handlers`), the web API (the entries
with ``http``, :mod:`agentd.web.api`), the remote client (:class:`agentd.api.RemoteSessions`),
the params decoding (``Router.add``), the JSON Schema and the protocol document's method table
(``agentd schema``).

Adding a session method is three edits: its params and result Structs
(:mod:`agentd.protocol.methods`), its entry here (``call`` names the method), and the method
of :class:`~agentd.session.service.SessionService` with that name, typed
``async def name(self, params: XParams, subscriber=None) -> XResult`` (its signature is
also the one line of :class:`agentd.api.SessionApi`; ``tests/test_api.py`` checks that the
three agree).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentd.protocol.base import Empty
from agentd.protocol.commands import SessionCommandsParams, SessionCommandsResult
from agentd.protocol.mcp import (
    McpListParams,
    McpListResult,
    McpLoginFinishParams,
    McpLoginParams,
    McpLoginResult,
    McpLogoutParams,
    McpLogoutResult,
)
from agentd.protocol.methods import (
    CancelResult,
    CompactParams,
    CompactResult,
    DaemonStatusResult,
    InitializeParams,
    InitializeResult,
    MessagesParams,
    MessagesResult,
    ModelsListParams,
    ModelsListResult,
    OkResult,
    PermissionAnswerParams,
    PromptParams,
    PromptResult,
    ReadTextFileParams,
    ReadTextFileResult,
    RequestPermissionParams,
    RequestPermissionResult,
    SessionBranchParams,
    SessionDeleteParams,
    SessionExportParams,
    SessionExportResult,
    SessionForkParams,
    SessionIdParams,
    SessionInfo,
    SessionListParams,
    SessionListResult,
    SessionLoadParams,
    SessionLoadResult,
    SessionNewParams,
    SessionNoteParams,
    SessionRenameParams,
    SessionStateResult,
    SessionTextParams,
    SetModelParams,
    SetPermissionModeParams,
    SubscribeParams,
    SubscribeResult,
    WebOpenParams,
    WebOpenResult,
    WriteTextFileParams,
    WriteTextFileResult,
)
from agentd.protocol.metrics import DaemonMetricsResult
from agentd.protocol.processes import (
    KillProcessParams,
    ProcessesParams,
    ProcessesResult,
    ProcessInfo,
)
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult, QuestionAnswerParams
from agentd.protocol.rewind import SessionRewindParams, SessionRewindResult
from agentd.protocol.skills import (
    SessionSkillsParams,
    SessionSkillsResult,
    SkillCheckParams,
    SkillCheckResult,
)


class MethodSpec(msgspec.Struct, frozen=True):
    """One method: its params and result types, who calls it and how it is served.

    * ``call``: the name of the :class:`agentd.api.SessionApi` method that serves it (None:
      a lifecycle method of the JSON-RPC front-end, or a server→client request);
    * ``subscribes``: the caller watches the session (over JSON-RPC: its connection);
    * ``rpc`` / ``http``: served over JSON-RPC / by the web API (``POST /api/<method>``);
    * ``local_only``: params fields (attribute names) accepted from same-machine transports
      only (Unix socket, stdio, in-process); every other transport refuses them with the same
      InvalidParams error (:func:`agentd.api.refuse_local_only`).
    """

    params: type[Any]
    result: type[Any]
    doc: str
    direction: Literal["client", "server"] = "client"
    call: str | None = None
    subscribes: bool = False
    rpc: bool = True
    http: bool = False
    local_only: tuple[str, ...] = ()


PROVIDER_ENV = ("provider_env",)
"""The client's provider variables: keys, so never accepted over the network."""


METHODS: dict[str, MethodSpec] = {
    "initialize": MethodSpec(
        InitializeParams,
        InitializeResult,
        "Handshake: the first call of every connection.",
    ),
    "shutdown": MethodSpec(Empty, OkResult, "Answer, then stop the daemon gracefully."),
    "daemon/status": MethodSpec(
        Empty,
        DaemonStatusResult,
        "Version, pid, uptime, connections, loaded sessions.",
    ),
    "daemon/metrics": MethodSpec(
        Empty,
        DaemonMetricsResult,
        "Sessions loaded, runs active, queue depth, loop lag, bytes out, errors, tokens, cost.",
    ),
    "daemon/web": MethodSpec(
        WebOpenParams,
        WebOpenResult,
        "Start the web chat (HTTP front-end) unless it runs; a one-time link to the page.",
    ),
    "session/new": MethodSpec(
        SessionNewParams,
        SessionInfo,
        "Open a new session (file header written at once).",
        call="create",
        subscribes=True,
        http=True,
        local_only=PROVIDER_ENV,
    ),
    "session/prompt": MethodSpec(
        PromptParams,
        PromptResult,
        "Run the agent on a prompt; answers when the run ends.",
        call="prompt",
        subscribes=True,
        http=True,
    ),
    "session/steer": MethodSpec(
        SessionTextParams,
        OkResult,
        "Queue a message for after the current tool calls (-32002 when the queue is full).",
        call="steer",
        http=True,
    ),
    "session/followUp": MethodSpec(
        SessionTextParams,
        OkResult,
        "Queue a message for when the agent would stop (-32002 when the queue is full).",
        call="follow_up",
        http=True,
    ),
    "session/note": MethodSpec(
        SessionNoteParams,
        OkResult,
        "Record a user message in an idle session without a run.",
        call="note",
    ),
    "session/cancel": MethodSpec(
        SessionIdParams,
        CancelResult,
        "Stop the run; drop queued messages.",
        call="cancel",
        http=True,
    ),
    "session/state": MethodSpec(
        SessionIdParams,
        SessionStateResult,
        "Idle or running, model, queues, usage.",
        call="state",
        http=True,
    ),
    "session/processes": MethodSpec(
        ProcessesParams,
        ProcessesResult,
        "The background processes of a session (or of every loaded one).",
        call="processes",
        http=True,
    ),
    "session/killProcess": MethodSpec(
        KillProcessParams,
        ProcessInfo,
        "End a background process of a session (TERM, then KILL).",
        call="kill_process",
        http=True,
    ),
    "session/messages": MethodSpec(
        MessagesParams,
        MessagesResult,
        "The conversation on the current branch, a page at a time (newest first).",
        call="messages",
        http=True,
    ),
    "session/setModel": MethodSpec(
        SetModelParams,
        SessionInfo,
        "Switch provider/model from the next LLM call on.",
        call="set_model",
        http=True,
        local_only=PROVIDER_ENV,
    ),
    "session/setPermissionMode": MethodSpec(
        SetPermissionModeParams,
        SessionInfo,
        "Switch the permission mode (auto, ask, read-only) for the next tool calls.",
        call="set_permission_mode",
    ),
    "session/commands": MethodSpec(
        SessionCommandsParams,
        SessionCommandsResult,
        "The custom commands (`/NAME` prompt templates) of a session, or of a new one in `cwd`.",
        call="commands",
        http=True,
    ),
    "session/skills": MethodSpec(
        SessionSkillsParams,
        SessionSkillsResult,
        "The Agent Skills a session can load (or a new one in `cwd`), with where each came from.",
        call="skills",
        http=True,
    ),
    "skills/check": MethodSpec(
        SkillCheckParams,
        SkillCheckResult,
        "Check a skill folder: front matter, the files it names, scripts executable.",
        call="check_skill",
    ),
    "models/list": MethodSpec(
        ModelsListParams,
        ModelsListResult,
        "Configured providers and models (for a project: cwd).",
        call="models",
        http=True,
        local_only=PROVIDER_ENV,
    ),
    "mcp/list": MethodSpec(
        McpListParams,
        McpListResult,
        "MCP servers of a project (cwd) and the running ones: state, tools, source; with "
        "check, each configured one connected to and its tools listed.",
        call="mcp_list",
        http=True,
    ),
    "mcp/login": MethodSpec(
        McpLoginParams,
        McpLoginResult,
        "Sign in to an OAuth-protected HTTP MCP server: the authorization URL to open (the "
        "daemon waits on a loopback redirect), or done when none is needed.",
        call="mcp_login",
    ),
    "mcp/loginFinish": MethodSpec(
        McpLoginFinishParams,
        McpLoginResult,
        "Wait for a login of mcp/login to end: done, with the server's tools.",
        call="mcp_login_finish",
    ),
    "mcp/logout": MethodSpec(
        McpLogoutParams,
        McpLogoutResult,
        "Forget the stored OAuth credentials of an HTTP MCP server.",
        call="mcp_logout",
    ),
    "session/list": MethodSpec(
        SessionListParams,
        SessionListResult,
        "Stored sessions, newest first, paged.",
        call="list",
        http=True,
    ),
    "session/load": MethodSpec(
        SessionLoadParams,
        SessionLoadResult,
        "Load a stored session; optionally replay its history.",
        call="load",
        subscribes=True,
        http=True,
        local_only=PROVIDER_ENV,
    ),
    "session/fork": MethodSpec(
        SessionForkParams,
        SessionInfo,
        "Copy the path to an entry into a new session.",
        call="fork",
        subscribes=True,
        http=True,
    ),
    "session/branch": MethodSpec(
        SessionBranchParams,
        OkResult,
        "Continue from an earlier entry in the same file.",
        call="branch",
    ),
    "session/rewind": MethodSpec(
        SessionRewindParams,
        SessionRewindResult,
        "Go back to before a user prompt: the conversation and the files its runs changed.",
        call="rewind",
        http=True,
    ),
    "session/rename": MethodSpec(
        SessionRenameParams, OkResult, "Set the session title.", call="rename", http=True
    ),
    "session/delete": MethodSpec(
        SessionDeleteParams,
        OkResult,
        "Delete the session file and its bash spill files (force: even while running).",
        call="delete",
        http=True,
    ),
    "session/close": MethodSpec(
        SessionIdParams, OkResult, "Unload the session; its file is kept.", call="close_session"
    ),
    "session/export": MethodSpec(
        SessionExportParams,
        SessionExportResult,
        "A self-contained Markdown or HTML document.",
        call="export",
        http=True,
    ),
    "session/subscribe": MethodSpec(
        SubscribeParams,
        SubscribeResult,
        "Receive a session's events, replaying since a seq.",
        call="subscribe",
        subscribes=True,
    ),
    "session/unsubscribe": MethodSpec(
        SessionIdParams,
        OkResult,
        "Stop receiving a session's events.",
        call="unsubscribe",
        subscribes=True,
    ),
    "session/compact": MethodSpec(
        CompactParams,
        CompactResult,
        "Summarise older messages into a compaction entry.",
        call="compact",
        http=True,
    ),
    "permission/answer": MethodSpec(
        PermissionAnswerParams,
        OkResult,
        "Answer a pending permission request (web API only: JSON-RPC clients answer "
        "`session/requestPermission`).",
        call="answer_permission",
        rpc=False,
        http=True,
    ),
    "session/requestPermission": MethodSpec(
        RequestPermissionParams, RequestPermissionResult, "Ask to approve a tool call.", "server"
    ),
    "question/answer": MethodSpec(
        QuestionAnswerParams,
        OkResult,
        "Answer a pending question (the web page; any client may, the first answer wins).",
        call="answer_question",
        http=True,
    ),
    "session/askQuestion": MethodSpec(
        AskQuestionParams,
        AskQuestionResult,
        "Ask the user questions (for clients with the questions capability).",
        "server",
    ),
    "fs/readTextFile": MethodSpec(
        ReadTextFileParams,
        ReadTextFileResult,
        "Read a file as the client holds it (for clients with the fs capability).",
        "server",
    ),
    "fs/writeTextFile": MethodSpec(
        WriteTextFileParams,
        WriteTextFileResult,
        "Write a file through the client (for clients with the fs capability).",
        "server",
    ),
}
"""Every request method. The JSON-RPC front-end serves each client-direction entry with
``rpc``; the web API each with ``http``."""
