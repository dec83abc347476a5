"""One running ``agentd.prompt``: what its session's events mean to the editor.

Streamed text and one line per tool call go to the prompt's progress (when it has one); the
final assistant text is kept for the answer; files the agent changed are opened in the
editor (``window/showDocument``, when the editor supports it and does not have them open);
warnings and errors are ``window/logMessage``.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentd.protocol.content import AssistantMessage
from agentd.protocol.events import (
    ErrorEvent,
    MessageEnd,
    MessageUpdate,
    SessionWarning,
    TextDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
)

if TYPE_CHECKING:
    from agentd.lsp.editor import Editor
    from agentd.lsp.progress import ProgressReporter
    from agentd.protocol.events import Event

TOOL_LINE = 120
"""Characters of a tool call's line in the progress, at most."""


class Run:
    """The editor's view of one prompt's run (see the module docstring)."""

    def __init__(self, session_id: str, editor: Editor, progress: ProgressReporter | None) -> None:
        self.session_id = session_id
        self.editor = editor
        self.progress = progress
        self.text = ""
        self._editing: dict[str, list[str]] = {}
        self._shown: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

    def see(self, event: Event) -> None:
        """Take one event of the session (never blocks)."""
        progress = self.progress
        if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
            if progress is not None:
                progress.text(event.delta.text)
        elif isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            self.text = event.message.text() or self.text
        elif isinstance(event, ToolExecutionStart):
            if progress is not None:
                progress.line(tool_line(event))
            if event.kind == "edit":
                self._editing[event.tool_call_id] = [loc.path for loc in event.locations]
        elif isinstance(event, ToolExecutionEnd):
            paths = self._editing.pop(event.tool_call_id, [])
            if not event.is_error:
                self._show(paths)
        elif isinstance(event, SessionWarning):
            self.editor.log(f"agentd: {event.message}", 2)
        elif isinstance(event, ErrorEvent):
            self.editor.log(f"agentd: {event.message}", 1)

    def _show(self, paths: list[str]) -> None:
        """Open the changed files the editor does not have open (once per run)."""
        if not self.editor.shows_documents():
            return
        for path in paths:
            if path in self._shown or self.editor.document(path) is not None:
                continue
            self._shown.add(path)
            task = asyncio.get_running_loop().create_task(self._show_one(path))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _show_one(self, path: str) -> None:

        params = {"uri": Path(path).as_uri(), "takeFocus": False}
        with contextlib.suppress(Exception):  # the editor may refuse: nothing to do
            await self.editor.request("window/showDocument", params)


def tool_line(event: ToolExecutionStart) -> str:
    """``name: what`` of a tool call (its command, path or pattern), on one line."""
    args = event.args
    what = next(
        (str(args[key]) for key in ("command", "path", "pattern", "url") if key in args), ""
    )
    line = f"{event.name}: {what}" if what else event.name
    line = " ".join(line.split())
    return line if len(line) <= TOOL_LINE else line[: TOOL_LINE - 1] + "…"
