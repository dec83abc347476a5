"""Subagents on the terminal: a child session's events, shown under the ``task`` call that
started it.

A ``subagent_start`` event of the session being rendered names a child session; from then on
the child's events (which come under the child's own session id) are drawn as compact lines
indented under the call, each with the task's title so parallel children stay apart::

    ⇢ task  Find the config loader (explore) · session 9c1e5a7f…
      │ Find the config loader  ● grep  load_config  daemon
      │ Find the config loader  The loader is in config/load.py …
      └ Find the config loader  done · 2 turns

Only whole lines are printed (no streamed text, no spinner), so children running side by
side never tear each other's output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentctl.render.style import Style
from agentctl.render.toolfmt import call_failed, describe_call, describe_outcome, shorten
from agentd.protocol.content import AssistantMessage, TextContent
from agentd.protocol.events import (
    AgentEnd,
    ErrorEvent,
    Event,
    MessageEnd,
    PermissionRequest,
    PermissionResolved,
    SubagentStart,
    ToolExecutionEnd,
    ToolExecutionStart,
)


class Subagents:
    """The children of one rendered session and how their events look (``line`` prints)."""

    def __init__(self, style: Style, line: Callable[[str], None], cwd: str | None) -> None:
        self.style = style
        self._line = line
        self.cwd = cwd
        self.titles: dict[str, str] = {}
        """Child session id → the task's title (depth: grandchildren too)."""
        self._depth: dict[str, int] = {}
        self._calls: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}

    def knows(self, session_id: str | None) -> bool:
        """Whether ``session_id`` is a child (or grandchild) of the rendered session."""
        return session_id is not None and session_id in self.titles

    def started(self, event: SubagentStart, parent: str | None = None) -> None:
        """A task call started child ``event.child_session_id`` (of ``parent``, a child
        itself, or of the rendered session when None)."""
        depth = self._depth.get(parent or "", 0) + 1
        self.titles[event.child_session_id] = event.description or event.agent
        self._depth[event.child_session_id] = depth
        label = f"{event.description} ({event.agent})" if event.description else event.agent
        self._emit(
            parent,
            f"{self.style.cyan('⇢')} {self.style.bold('task')}  {label} "
            + self.style.dim(f"· session {event.child_session_id}"),
        )

    def event(self, session_id: str, event: Event) -> None:
        """One event of a child session, as a line under its task (most events show nothing)."""
        style, title = self.style, self.titles.get(session_id, "")
        match event:
            case SubagentStart():
                self.started(event, session_id)
            case ToolExecutionStart():
                self._calls[(session_id, event.tool_call_id)] = (event.name, event.args)
            case ToolExecutionEnd():
                self._tool_end(session_id, event)
            case MessageEnd(message=AssistantMessage() as message):
                text = " ".join(
                    b.text for b in message.content if isinstance(b, TextContent)
                ).strip()
                if text:
                    self._child(session_id, f"{shorten(' '.join(text.split()), 160)}")
            case PermissionRequest():
                summary = describe_call(event.tool, event.args, self.cwd)
                self._child(
                    session_id, style.yellow(f"? {event.tool}  {summary}  waits for approval")
                )
            case PermissionResolved() if event.outcome.startswith("reject"):
                self._child(session_id, style.red(f"⊘ permission refused: {event.reason or ''}"))
            case ErrorEvent():
                self._child(session_id, style.red(f"✗ {event.message}"))
            case AgentEnd():
                how = "done" if event.stop_reason == "end_turn" else event.stop_reason
                turns = f" · {event.turns} turn{'s' if event.turns != 1 else ''}"
                self._emit(session_id, style.dim(f"└ {title}  {how}{turns}"))
            case _:
                pass

    def _tool_end(self, session_id: str, event: ToolExecutionEnd) -> None:
        name, args = self._calls.pop((session_id, event.tool_call_id), (event.name, {}))
        text = "".join(b.text for b in event.result if isinstance(b, TextContent))
        failed = call_failed(event.details, event.is_error)
        bullet = self.style.red("✗") if failed else self.style.green("●")
        shown = f"{bullet} {self.style.bold(name)}  {describe_call(name, args, self.cwd)}"
        outcome = describe_outcome(event.details, event.is_error, text)
        if outcome:
            shown += "  " + (self.style.red(outcome) if failed else self.style.dim(outcome))
        self._child(session_id, shown.rstrip())

    def _child(self, session_id: str, text: str) -> None:
        title = self.titles.get(session_id, "")
        self._emit(session_id, f"{self.style.dim('│')} {self.style.dim(title)}  {text}")

    def _emit(self, session_id: str | None, text: str) -> None:
        """Print ``text`` as a line of ``session_id`` (None: the rendered session), indented
        two spaces per generation."""
        self._line("  " * self._depth.get(session_id or "", 0) + text)
