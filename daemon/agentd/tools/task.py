"""The ``task`` tool: hand a piece of work to a subagent, a child session with its own context.

The child runs on the parent's provider and model (unless its profile names another), with
the tools its profile allows, and its final text is this call's result. The tool itself only
validates and reports; the session layer creates and runs the child (``ctx.subagents``, a
:class:`~agentd.tools.base.Subagents`), so this module knows nothing of sessions. Cancelling
the call cancels the child. ``task`` is not a mutating tool: several task calls of one reply
run in parallel (each child edits files under the family's per-file locks, see
:mod:`agentd.tools.files.locks`).
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import TaskDetails
from agentd.tools.base import TaskRequest, ToolContext, ToolError, ToolResult


class TaskParams(msgspec.Struct, forbid_unknown_fields=True):
    description: Annotated[
        str, msgspec.Meta(description="A short (3-7 word) title of the task, shown to the user.")
    ]
    prompt: Annotated[
        str,
        msgspec.Meta(
            description="The full task for the subagent: it sees nothing of this conversation, "
            "so say everything it needs and what to report back."
        ),
    ]
    agent: Annotated[
        str | None,
        msgspec.Meta(description="The agent profile to run (default: general)."),
    ] = None


class TaskTool:
    name: ClassVar[str] = "task"
    description: ClassVar[str] = (
        "Start a subagent: a fresh agent with its own context that works on `prompt` and "
        "returns its final report as this tool's result. Use it for self-contained side work "
        "(searching a large codebase, a focused change, research) so your own context stays "
        "small. It cannot see this conversation: give it the whole task. Several task calls "
        "in one reply run in parallel; do not give two subagents the same file to change. "
        "Agent profiles (`agent`):\n{agent_profiles}"
    )
    Params: ClassVar[type[msgspec.Struct]] = TaskParams
    kind: ClassVar[ToolKind] = "other"
    mutating: ClassVar[bool] = False

    def locations(self, params: TaskParams, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: TaskParams, ctx: ToolContext) -> ToolResult:
        if ctx.subagents is None:
            raise ToolError("Subagents are not available in this session.")
        if not params.prompt.strip():
            raise ToolError("The prompt is empty; say what the subagent should do.")
        request = TaskRequest(
            description=params.description.strip() or "task",
            prompt=params.prompt,
            agent=params.agent or "general",
            tool_call_id=ctx.tool_call_id,
        )
        outcome = await ctx.subagents.run_task(request)
        details = TaskDetails(
            child_session_id=outcome.child_session_id,
            agent=outcome.agent,
            description=request.description,
            stop_reason=outcome.stop_reason,
            turns=outcome.turns,
            usage=outcome.usage,
            cost=outcome.cost,
        )
        if outcome.stop_reason != "end_turn":
            why = outcome.error or f"it stopped: {outcome.stop_reason}"
            text = f"The subagent did not finish ({why})."
            if outcome.text.strip():
                text += f" Its last message:\n\n{outcome.text}"
            return ToolResult(text, details, is_error=True)
        return ToolResult(outcome.text or "(the subagent gave no final text)", details)
