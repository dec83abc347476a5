"""The method table: every JSON-RPC method with its params and result types.

:data:`METHODS` drives the server's params decoding (``Router.add``), the JSON Schema and the
protocol document's method table (``agentd schema``).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentd.protocol.base import Empty
from agentd.protocol.methods import (
    CancelResult,
    CompactParams,
    CompactResult,
    DaemonStatusResult,
    InitializeParams,
    InitializeResult,
    MessagesResult,
    ModelsListParams,
    ModelsListResult,
    OkResult,
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
)


class MethodSpec(msgspec.Struct, frozen=True):
    """One method: its params and result types and who calls it."""

    params: type[Any]
    result: type[Any]
    doc: str
    direction: Literal["client", "server"] = "client"


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
    "daemon/web": MethodSpec(
        WebOpenParams,
        WebOpenResult,
        "Start the web chat (HTTP front-end) unless it runs; a one-time link to the page.",
    ),
    "session/new": MethodSpec(
        SessionNewParams,
        SessionInfo,
        "Open a new session (file header written at once).",
    ),
    "session/prompt": MethodSpec(
        PromptParams,
        PromptResult,
        "Run the agent on a prompt; answers when the run ends.",
    ),
    "session/steer": MethodSpec(
        SessionTextParams,
        OkResult,
        "Queue a message for after the current tool calls.",
    ),
    "session/followUp": MethodSpec(
        SessionTextParams,
        OkResult,
        "Queue a message for when the agent would stop.",
    ),
    "session/note": MethodSpec(
        SessionNoteParams,
        OkResult,
        "Record a user message in an idle session without a run.",
    ),
    "session/cancel": MethodSpec(
        SessionIdParams,
        CancelResult,
        "Stop the run; drop queued messages.",
    ),
    "session/state": MethodSpec(
        SessionIdParams,
        SessionStateResult,
        "Idle or running, model, queues, usage.",
    ),
    "session/messages": MethodSpec(
        SessionIdParams,
        MessagesResult,
        "The conversation on the current branch.",
    ),
    "session/setModel": MethodSpec(
        SetModelParams,
        SessionInfo,
        "Switch provider/model from the next LLM call on.",
    ),
    "session/setPermissionMode": MethodSpec(
        SetPermissionModeParams,
        SessionInfo,
        "Switch the permission mode (auto, ask, read-only) for the next tool calls.",
    ),
    "models/list": MethodSpec(
        ModelsListParams,
        ModelsListResult,
        "Configured providers and models (for a project: cwd).",
    ),
    "session/list": MethodSpec(
        SessionListParams,
        SessionListResult,
        "Stored sessions, newest first, paged.",
    ),
    "session/load": MethodSpec(
        SessionLoadParams,
        SessionLoadResult,
        "Load a stored session; optionally replay its history.",
    ),
    "session/fork": MethodSpec(
        SessionForkParams,
        SessionInfo,
        "Copy the path to an entry into a new session.",
    ),
    "session/branch": MethodSpec(
        SessionBranchParams,
        OkResult,
        "Continue from an earlier entry in the same file.",
    ),
    "session/rename": MethodSpec(SessionRenameParams, OkResult, "Set the session title."),
    "session/delete": MethodSpec(
        SessionDeleteParams,
        OkResult,
        "Delete the session file and its bash spill files (force: even while running).",
    ),
    "session/close": MethodSpec(SessionIdParams, OkResult, "Unload the session; its file is kept."),
    "session/export": MethodSpec(
        SessionExportParams,
        SessionExportResult,
        "A self-contained Markdown or HTML document.",
    ),
    "session/subscribe": MethodSpec(
        SubscribeParams,
        SubscribeResult,
        "Receive a session's events, replaying since a seq.",
    ),
    "session/unsubscribe": MethodSpec(
        SessionIdParams,
        OkResult,
        "Stop receiving a session's events.",
    ),
    "session/compact": MethodSpec(
        CompactParams,
        CompactResult,
        "Summarise older messages into a compaction entry.",
    ),
    "session/requestPermission": MethodSpec(
        RequestPermissionParams, RequestPermissionResult, "Ask to approve a tool call.", "server"
    ),
    "fs/readTextFile": MethodSpec(
        ReadTextFileParams,
        ReadTextFileResult,
        "Read a file as the client holds it (for clients with the fs capability).",
        "server",
    ),
    "fs/writeTextFile": MethodSpec(
        WriteTextFileParams,
        OkResult,
        "Write a file through the client (for clients with the fs capability).",
        "server",
    ),
}
"""Every request method. The server registers a handler for each client-direction entry."""
