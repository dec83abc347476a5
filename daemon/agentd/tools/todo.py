"""The ``todo`` tool: the agent's visible plan.

The model writes the whole list on every call (no diffs to get wrong). The result tells the
model the plan was recorded, and carries a ``plan_update`` event that the loop emits before
the call's ``tool_execution_end``; the session stores it as a ``plan`` entry, so clients
attaching later, a replayed load, ``session/state`` and exports show the current plan. It
touches nothing outside the session, so every permission mode allows it.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import (
    Location,
    PlanItem,
    PlanPriority,
    PlanStatus,
    PlanUpdate,
    ToolKind,
)
from agentd.protocol.tool_details import TodoDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult

MAX_TODOS = 50
MAX_CONTENT_CHARS = 500
MARKS: dict[str, str] = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
"""How a step's status reads in text (the result, exports, piped agentctl)."""


class TodoItem(msgspec.Struct, forbid_unknown_fields=True):
    content: Annotated[str, msgspec.Meta(description="The step, in a few words.")]
    status: Annotated[
        PlanStatus, msgspec.Meta(description="pending, in_progress (one at a time) or completed.")
    ]
    priority: Annotated[
        PlanPriority | None, msgspec.Meta(description="high, medium or low (default medium).")
    ] = None


class TodoParams(msgspec.Struct, forbid_unknown_fields=True):
    todos: Annotated[
        list[TodoItem],
        msgspec.Meta(description="The whole plan, in order; it replaces the previous one."),
    ]


class TodoTool:
    name: ClassVar[str] = "todo"
    description: ClassVar[str] = (
        "Write your plan for a multi-step task as a checklist the user sees. Send the whole "
        "list every time (it replaces the previous one): each step with status pending, "
        "in_progress or completed. Keep exactly one step in_progress while you work, and mark "
        "a step completed as soon as it is done. Skip it for a single quick step or a "
        f"question. At most {MAX_TODOS} steps; an empty list clears the plan."
    )
    Params: ClassVar[type[TodoParams]] = TodoParams
    kind: ClassVar[ToolKind] = "other"
    mutating: ClassVar[bool] = False

    def locations(self, params: TodoParams, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: TodoParams, ctx: ToolContext) -> ToolResult:
        entries = plan_items(params.todos)
        done = sum(1 for entry in entries if entry.status == "completed")
        text = f"Plan recorded ({done}/{len(entries)} done):\n" if entries else "Plan cleared."
        text += render_plan(entries)
        details = TodoDetails(steps=len(entries), completed=done)
        return ToolResult(text.rstrip("\n"), details, events=[PlanUpdate(entries=entries)])


def plan_items(todos: list[TodoItem]) -> list[PlanItem]:
    """The plan entries of the model's list; ToolError when it is too long or a step empty."""
    if len(todos) > MAX_TODOS:
        raise ToolError(f"The plan has {len(todos)} steps; keep it to {MAX_TODOS} at most.")
    entries = []
    for number, todo in enumerate(todos, 1):
        content = " ".join(todo.content.split())
        if not content:
            raise ToolError(f"Step {number} has no content; describe each step in a few words.")
        if len(content) > MAX_CONTENT_CHARS:
            content = content[: MAX_CONTENT_CHARS - 1] + "…"
        entries.append(
            PlanItem(content=content, status=todo.status, priority=todo.priority or "medium")
        )
    return entries


def render_plan(entries: list[PlanItem]) -> str:
    """The plan as text lines: ``[x] step`` (``[~]`` in progress, ``[ ]`` pending)."""
    return "".join(f"{MARKS[entry.status]} {entry.content}\n" for entry in entries)
