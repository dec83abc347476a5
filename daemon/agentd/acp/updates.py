"""agentd's session events → ACP ``session/update`` values, for one session.

:class:`UpdateMapper` is fed every ``session/event`` of its session, in order, and returns the
ACP updates to send (usually one, often none). Live runs map delta for delta: text and
reasoning deltas become ``agent_message_chunk`` / ``agent_thought_chunk``; a tool call becomes
``tool_call`` (title, kind, locations, ``rawInput``, ``in_progress``), its streamed output a
``tool_call_update`` with the output's tail, its end a ``tool_call_update`` with ``completed``
or ``failed`` and its content (diffs for file changes, see :mod:`agentd.acp.toolcontent`).
A permission request sets the call back to ``pending`` until it is answered. A
``plan_update`` (the ``todo`` tool, also after a replayed history) becomes ``plan``. A
background process is a tool call of its own (:mod:`agentd.acp.processes`). A hook's
block (``hook_result`` with decision ``block``) becomes an ``agent_thought_chunk`` saying which
hook blocked what and why (a blocked call's ``failed`` update carries the reason too).

History replay (``session/load``) arrives as ``message_end`` events with ``seq`` 0 and maps
message by message: user chunks, thought and message chunks, each tool call and its result.

The mapper also remembers what the ``session/prompt`` answer needs: the last turn's stop
reason (``length`` → ``max_tokens``) and the context size of the last reply.
"""

from __future__ import annotations

from typing import Any

from agentd.acp.processes import ProcessUpdates
from agentd.acp.titles import absolute_path, native_kind_of, tool_kind, tool_title
from agentd.acp.toolcontent import LIVE_TAIL_CHARS, live_output, result_content
from agentd.protocol.acp import (
    AcpPlanEntry,
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentBlock,
    ImageBlock,
    PlanUpdate,
    SessionUpdate,
    TextBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)
from agentd.protocol.content import (
    AssistantMessage,
    ImageContent,
    ServerToolCall,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from agentd.protocol.events import (
    Event,
    HookResult,
    Location,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    PermissionRequest,
    PermissionResolved,
    TextDelta,
    ThinkingDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
)
from agentd.protocol.events import PlanUpdate as PlanEvent
from agentd.protocol.processes import ProcessExit, ProcessOutput, ProcessStart
from agentd.protocol.tool_details import ToolDetails

_NOTHING: list[SessionUpdate] = []


class UpdateMapper:
    """Maps one session's events to ACP updates (see the module docstring)."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.message_id: str | None = None
        self.last_turn_stop: str | None = None
        self.context_tokens = 0
        self._args: dict[str, tuple[str, dict[str, Any]]] = {}
        self._output: dict[str, list[str]] = {}
        self._processes = ProcessUpdates()

    def map(self, event: Event, seq: int = 1) -> list[SessionUpdate]:
        """The updates for ``event`` (``seq`` 0 with ``message_end``: history replay)."""
        if isinstance(event, MessageUpdate):
            return self._delta(event)
        if isinstance(event, MessageEnd):
            return self._replay(event.message) if seq == 0 else self._finished(event.message)
        if isinstance(event, ToolExecutionUpdate):
            return self._progress(event)
        if isinstance(event, ToolExecutionStart):
            return [self._start(event)]
        if isinstance(event, ToolExecutionEnd):
            return [self._end(event)]
        if isinstance(event, MessageStart):
            if event.role == "assistant":
                self.message_id = event.message_id
            return _NOTHING
        if isinstance(event, TurnEnd):
            self.last_turn_stop = event.stop_reason
            return _NOTHING
        if isinstance(event, PlanEvent):
            return [_plan(event)]
        if isinstance(event, ProcessStart | ProcessOutput | ProcessExit):
            return self._processes.map(event)
        if isinstance(event, HookResult) and event.decision == "block":
            return [AgentThoughtChunk(content=TextBlock(text=hook_block_text(event)))]
        if isinstance(event, PermissionRequest):
            return [ToolCallProgress(tool_call_id=event.tool_call_id, status="pending")]
        if isinstance(event, PermissionResolved) and event.outcome.startswith("allow"):
            return [ToolCallProgress(tool_call_id=event.tool_call_id, status="in_progress")]
        return _NOTHING

    # --- live --------------------------------------------------------------------------------

    def _delta(self, event: MessageUpdate) -> list[SessionUpdate]:
        delta = event.delta
        if isinstance(delta, TextDelta):
            return [
                AgentMessageChunk(content=TextBlock(text=delta.text), message_id=self.message_id)
            ]
        if isinstance(delta, ThinkingDelta):
            return [
                AgentThoughtChunk(content=TextBlock(text=delta.text), message_id=self.message_id)
            ]
        return _NOTHING

    def _finished(self, message: Any) -> list[SessionUpdate]:
        if isinstance(message, AssistantMessage):
            usage = message.usage
            self.context_tokens = (
                usage.input_tokens
                + usage.output_tokens
                + usage.cache_read_tokens
                + usage.cache_write_tokens
            )
        return _NOTHING

    def _start(self, event: ToolExecutionStart) -> ToolCallStart:
        self._args[event.tool_call_id] = (event.name, event.args)
        return ToolCallStart(
            tool_call_id=event.tool_call_id,
            title=tool_title(event.name, event.args, self.cwd),
            kind=tool_kind(event.name, event.args, event.kind),
            status="in_progress",
            locations=[self._location(loc) for loc in event.locations],
            raw_input=event.args,
        )

    def _location(self, location: Location) -> ToolCallLocation:
        path = absolute_path(location.path, self.cwd) or location.path
        return ToolCallLocation(path=path, line=location.line)

    def _progress(self, event: ToolExecutionUpdate) -> list[SessionUpdate]:
        chunks = self._output.setdefault(event.tool_call_id, [])
        chunks.append(event.output)
        if len(chunks) > 64:  # keep joining cheap: fold the pieces into one
            chunks[:] = ["".join(chunks)[-2 * LIVE_TAIL_CHARS :]]
        content = live_output("".join(chunks))
        return [ToolCallProgress(tool_call_id=event.tool_call_id, content=content)]

    def _end(self, event: ToolExecutionEnd) -> ToolCallProgress:
        self._output.pop(event.tool_call_id, None)
        _, args = self._args.pop(event.tool_call_id, (event.name, {}))
        return self._result(
            event.tool_call_id, event.name, args, event.result, event.is_error, event.details
        )

    def _result(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        result: list[TextContent | ImageContent],
        is_error: bool,
        details: ToolDetails | None,
    ) -> ToolCallProgress:
        path = absolute_path(args.get("path"), self.cwd)
        return ToolCallProgress(
            tool_call_id=call_id,
            status="failed" if is_error else "completed",
            content=result_content(name, args, result, is_error, details, path),
        )

    # --- history replay ----------------------------------------------------------------------

    def _replay(self, message: Any) -> list[SessionUpdate]:
        if isinstance(message, UserMessage):
            content = message.content
            if message.command is not None:  # what the user typed, not its expansion
                content = [TextContent(text=message.command), *content[1:]]
            return [
                UserMessageChunk(content=block, message_id=message.id)
                for block in map(_content_block, content)
                if block is not None
            ]
        if isinstance(message, AssistantMessage):
            return [u for block in message.content if (u := self._replay_block(message, block))]
        if isinstance(message, ToolResultMessage):
            _, args = self._args.pop(message.tool_call_id, (message.tool_name, {}))
            return [
                self._result(
                    message.tool_call_id,
                    message.tool_name,
                    args,
                    message.content,
                    message.is_error,
                    message.details,
                )
            ]
        return _NOTHING

    def _replay_block(
        self,
        message: AssistantMessage,
        block: TextContent | ThinkingContent | ToolCall | ServerToolCall,
    ) -> SessionUpdate | None:
        if isinstance(block, ServerToolCall):  # replayed as its own tool events
            return None
        if isinstance(block, TextContent):
            return AgentMessageChunk(content=TextBlock(text=block.text), message_id=message.id)
        if isinstance(block, ThinkingContent):
            if not block.thinking:
                return None
            return AgentThoughtChunk(content=TextBlock(text=block.thinking), message_id=message.id)
        kind = native_kind_of(block.name)
        path = absolute_path(block.arguments.get("path"), self.cwd)
        self._args[block.id] = (block.name, block.arguments)
        return ToolCallStart(
            tool_call_id=block.id,
            title=tool_title(block.name, block.arguments, self.cwd),
            kind=tool_kind(block.name, block.arguments, kind),
            status="in_progress",
            locations=[ToolCallLocation(path=path)] if path else [],
            raw_input=block.arguments,
        )


def _content_block(block: TextContent | ImageContent) -> ContentBlock | None:
    if isinstance(block, ImageContent):
        return ImageBlock(data=block.data, mime_type=block.mime_type)
    return TextBlock(text=block.text) if block.text else None


def hook_block_text(event: HookResult) -> str:
    """``⊘ pre_tool hook blocked bash: <reason> (scripts/policy-check)`` and a newline."""
    what = f" {event.tool}" if event.tool else " the prompt" if event.event == "user_prompt" else ""
    return f"⊘ {event.event} hook blocked{what}: {event.reason or ''} ({event.command})\n"


def _plan(event: PlanEvent) -> PlanUpdate:
    """ACP ``plan``: the whole plan, each step with its priority and status."""
    return PlanUpdate(
        entries=[
            AcpPlanEntry(content=item.content, priority=item.priority, status=item.status)
            for item in event.entries
        ]
    )
