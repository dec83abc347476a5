"""Agent events: the :data:`Event` tagged union streamed as ``session/event`` notifications.

Order of one run: ``agent_start``; per turn ``turn_start``, the user/assistant/tool-result
``message_start``/``message_update``*/``message_end`` groups, ``tool_execution_*`` per call,
``turn_end``; exactly one ``agent_end``, always last, also on error and cancel.

``message_update`` carries only the delta (:data:`Delta`), never the message so far, so the
bytes on the wire stay proportional to the reply.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentd.protocol.approval import ApprovalPreview
from agentd.protocol.base import Wire
from agentd.protocol.content import Message, StopReason, Usage, UserContent
from agentd.protocol.processes import ProcessExit, ProcessOutput, ProcessStart
from agentd.protocol.tool_details import ToolDetails

# --- deltas carried by message_update -------------------------------------------------------
# ``index`` is the content block of the assistant message the delta belongs to; it is omitted
# on the wire when 0 (the common case), like every field at its default. A block that arrives
# whole (redacted thinking) has no delta: it appears in ``message_end`` only.


class TextDelta(Wire, tag="text_delta", tag_field="type", kw_only=True):
    """More text for content block ``index`` of the assistant message."""

    index: int = 0
    text: str


class ThinkingDelta(Wire, tag="thinking_delta", tag_field="type", kw_only=True):
    """More reasoning text for content block ``index``."""

    index: int = 0
    text: str


class ToolCallStartDelta(Wire, tag="toolcall_start", tag_field="type", kw_only=True):
    """A tool call begins at content block ``index``."""

    index: int = 0
    id: str
    name: str


class ToolCallDelta(Wire, tag="toolcall_delta", tag_field="type", kw_only=True):
    """A raw chunk of the JSON arguments string of the tool call at ``index``."""

    index: int = 0
    arguments: str


Delta = TextDelta | ThinkingDelta | ToolCallStartDelta | ToolCallDelta

# --- events ---------------------------------------------------------------------------------

RunStopReason = Literal["end_turn", "max_turns", "budget", "cancelled", "error", "blocked"]
"""Why a whole run (one ``session/prompt``) ended (``blocked``: a ``user_prompt`` hook
refused the prompt before any model call)."""


class AgentStart(Wire, tag="agent_start", tag_field="type"):
    """A run begins."""


class TurnStart(Wire, tag="turn_start", tag_field="type"):
    """Turn ``turn`` (1-based) begins: one LLM call plus the tool calls it asks for."""

    turn: int


class MessageStart(Wire, tag="message_start", tag_field="type"):
    """A message begins. For assistant messages ``message_update`` deltas follow."""

    message_id: str
    role: Literal["user", "assistant", "tool_result"]


class MessageUpdate(Wire, tag="message_update", tag_field="type"):
    """One delta of the assistant message opened by the session's last ``message_start``.

    One assistant message streams at a time per session, so its id is not repeated here.
    """

    delta: Delta


class MessageEnd(Wire, tag="message_end", tag_field="type"):
    """The complete message, as stored in the session."""

    message: Message


class Location(Wire):
    """A file position a tool call touches (1-based line), for editors to show."""

    path: str
    line: int | None = None


ToolKind = Literal["read", "edit", "execute", "search", "other"]


class ToolExecutionStart(Wire, tag="tool_execution_start", tag_field="type"):
    """A tool call starts running."""

    tool_call_id: str
    name: str
    args: dict[str, Any]
    kind: ToolKind = "other"
    locations: list[Location] = msgspec.field(default_factory=list)


class ToolExecutionUpdate(Wire, tag="tool_execution_update", tag_field="type"):
    """New output of a running tool call (a delta: append it to what came before)."""

    tool_call_id: str
    output: str


class ToolExecutionEnd(Wire, tag="tool_execution_end", tag_field="type"):
    """A tool call finished. ``result`` is what the model sees; ``details`` is for UIs."""

    tool_call_id: str
    name: str
    result: list[UserContent]
    is_error: bool = False
    details: ToolDetails | None = None


class SubagentStart(Wire, tag="subagent_start", tag_field="type"):
    """A ``task`` call started a subagent, a child session whose events follow under its id.

    ``child_session_id`` runs profile ``agent`` for the call ``tool_call_id``. Its own events
    come as ``session/event`` notifications under its id (to this session's subscribers too),
    so a client can nest them under the call; the call's ``tool_execution_end`` has the
    child's final text, and ``details`` its id, usage and cost."""

    tool_call_id: str
    child_session_id: str
    agent: str
    description: str = ""


class TurnEnd(Wire, tag="turn_end", tag_field="type"):
    """Turn ``turn`` ended with the assistant message's stop reason."""

    turn: int
    stop_reason: StopReason


class AgentEnd(Wire, tag="agent_end", tag_field="type"):
    """The run ended. Exactly one per run, always the last event of it."""

    stop_reason: RunStopReason
    turns: int = 0
    usage: Usage = msgspec.field(default_factory=Usage)
    cost: float = 0.0
    error: str | None = None


class Retry(Wire, tag="retry", tag_field="type"):
    """The provider call failed transiently and is retried after ``delay_ms``."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error: str


class QueueUpdate(Wire, tag="queue_update", tag_field="type"):
    """The steering and follow-up queues changed (texts not yet delivered).

    Each update carries both queues whole; they are capped together (64 texts, 256 KiB), so an
    update stays small.
    """

    steering: list[str] = msgspec.field(default_factory=list)
    follow_up: list[str] = msgspec.field(default_factory=list)


class ErrorEvent(Wire, tag="error", tag_field="type"):
    """Something went wrong that the client should show (a failed run: just before agent_end).

    A run that fails sends one just before its ``agent_end`` (same message as its ``error``),
    ``code`` saying whose failure it was: ``provider_error`` (the LLM call failed: retries
    exhausted, a refused request, a cut stream, context overflow), ``store_error`` (the
    session file could not be written: a full disk) or ``internal_error`` (a daemon bug;
    details in the daemon log).
    """

    message: str
    code: str = "error"


PermissionOption = Literal[
    "allow_once", "allow_always", "allow_always_project", "reject_once", "reject_always"
]
"""An approval's answers: once, always in this session (the rule ``always_rule`` names),
always in this project (the same rule, also written to the user's config for the session's
folder), and the refusals."""


class PermissionRequest(Wire, tag="permission_request", tag_field="type"):
    """A tool call waits for approval (sent as ``session/requestPermission`` to clients).

    ``preview`` shows what the call would do (:class:`ApprovalPreview`, without the whole
    file texts); ``always_rule`` is the rule an ``allow_always`` answer adds for the session
    (e.g. ``bash(npm test:*)``, ``edit``) and ``allow_always_project`` also keeps for the
    session's folder in the user's config, for the labels of those choices.
    """

    tool_call_id: str
    tool: str
    args: dict[str, Any]
    options: list[PermissionOption] = msgspec.field(
        default_factory=lambda: ["allow_once", "allow_always", "reject_once", "reject_always"]
    )
    preview: ApprovalPreview | None = None
    always_rule: str | None = None


class PermissionResolved(Wire, tag="permission_resolved", tag_field="type"):
    """The approval for ``tool_call_id`` was decided (by a client, a rule or a timeout)."""

    tool_call_id: str
    outcome: PermissionOption
    reason: str | None = None


class CompactionStart(Wire, tag="compaction_start", tag_field="type"):
    """Older messages are being summarised (``reason``: manual, threshold or overflow)."""

    reason: Literal["manual", "threshold", "overflow"]


class CompactionEnd(Wire, tag="compaction_end", tag_field="type"):
    """Compaction finished; ``summary`` replaces the messages before ``first_kept_entry_id``."""

    reason: Literal["manual", "threshold", "overflow"]
    summary: str | None = None
    tokens_before: int = 0
    first_kept_entry_id: str | None = None
    error: str | None = None


class SessionWarning(Wire, tag="session_warning", tag_field="type"):
    """A problem with the session file: found while loading it (torn or corrupt line,
    repair), or a failed write (``disk full: …``)."""

    message: str
    line: int | None = None


PlanStatus = Literal["pending", "in_progress", "completed"]
PlanPriority = Literal["high", "medium", "low"]


class PlanItem(Wire, omit_defaults=False):
    """One step of the agent's plan (the ``todo`` tool): what, how far, how important
    (every field always present)."""

    content: str
    status: PlanStatus = "pending"
    priority: PlanPriority = "medium"


class PlanUpdate(Wire, tag="plan_update", tag_field="type"):
    """The agent's plan changed; ``entries`` is the whole plan now (replace what was shown).

    Sent when the model calls the ``todo`` tool (just before that call's
    ``tool_execution_end``), and to a client loading a session with ``replay``, after the
    messages. An empty list clears the plan.
    """

    entries: list[PlanItem] = msgspec.field(default_factory=list)


HookEventName = Literal[
    "session_start", "user_prompt", "pre_tool", "post_tool", "stop", "pre_compact"
]
"""The points of a run where configured hooks run (``[[hooks.<event>]]``)."""
HookDecision = Literal["allow", "block", "error"]


PermissionMode = Literal["auto", "ask", "read-only"]
"""``auto``: every tool runs; ``ask``: mutating tools wait for an approval; ``read-only``:
mutating tools are refused."""


class SettingsChanged(Wire, tag="settings_changed", tag_field="type"):
    """The session's model or permission mode changed (``session/setModel``,
    ``session/setPermissionMode``, from any client): what the session uses from its next
    model call and tool call on. A client that shows them takes them from here."""

    provider: str
    model: str
    permission_mode: PermissionMode


class SessionRewound(Wire, tag="session_rewound", tag_field="type"):
    """``session/rewind`` took the session back to before the prompt ``prompt``: the
    conversation now ends at ``leaf_id`` (None: before the first entry). A client showing
    the session loads its history again (the earlier events belong to the discarded turns)."""

    leaf_id: str | None
    prompt: str


class HookResult(Wire, tag="hook_result", tag_field="type"):
    """A configured hook ran (recorded in the session file too).

    ``decision``: ``allow`` (exit 0, the run goes on, maybe with added context), ``block``
    (exit 2 or ``{"decision": "block"}``: a ``pre_tool`` call fails, a ``user_prompt`` ends
    the run with stop reason ``blocked``), ``error`` (another exit code, a crash or a timeout:
    the run goes on, ``reason`` says what went wrong). ``exit_code`` is None when the hook
    was killed (timeout, signal). ``tool``/``tool_call_id`` name the call of a ``pre_tool`` or
    ``post_tool`` hook."""

    event: HookEventName
    command: str
    exit_code: int | None
    decision: HookDecision
    duration_ms: float
    reason: str | None = None
    tool: str | None = None
    tool_call_id: str | None = None
    timed_out: bool = False


Event = (
    AgentStart
    | TurnStart
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | SubagentStart
    | TurnEnd
    | AgentEnd
    | Retry
    | QueueUpdate
    | ErrorEvent
    | PermissionRequest
    | PermissionResolved
    | CompactionStart
    | CompactionEnd
    | SessionWarning
    | PlanUpdate
    | HookResult
    | SessionRewound
    | SettingsChanged
    | ProcessStart
    | ProcessOutput
    | ProcessExit
)


class SessionEvent(Wire):
    """Params of the ``session/event`` notification. ``seq`` rises by one per session event.

    A session's subscribers also receive the events of its subagents' sessions, each under
    the child's ``session_id`` and numbering, with ``parent_session_id`` naming the session
    whose ``task`` call started it (absent for a top-level session)."""

    session_id: str
    seq: int
    event: Event
    parent_session_id: str | None = None
