"""A session's background processes as ACP tool calls.

ACP has no notion of a process that outlives its tool call, and its terminals
(``terminal/create``) are run by the client, not shown for the agent's own processes. So each
background process becomes a tool call of its own, ``process-p1`` (``kind`` ``execute``, its
command as the title, ``in_progress``) from its ``process_start``; each ``process_output``
updates its content with the output's tail (bounded, like a running bash call's); its
``process_exit`` ends it ``completed`` (exit code 0) or ``failed``, with the tail and how it
ended. The ``bash`` call that started it ends as usual, at once.
"""

from __future__ import annotations

from agentd.acp.toolcontent import LIVE_TAIL_CHARS, live_output
from agentd.protocol.acp import SessionUpdate, ToolCallProgress, ToolCallStart
from agentd.protocol.processes import ProcessExit, ProcessInfo, ProcessOutput, ProcessStart


def process_call_id(process_id: str) -> str:
    """The ACP tool call id of background process ``process_id``."""
    return f"process-{process_id}"


class ProcessUpdates:
    """The tool calls of one session's background processes (their output tails)."""

    def __init__(self) -> None:
        self._tails: dict[str, str] = {}

    def map(self, event: ProcessStart | ProcessOutput | ProcessExit) -> list[SessionUpdate]:
        if isinstance(event, ProcessStart):
            return [self._start(event.process)]
        if isinstance(event, ProcessOutput):
            tail = (self._tails.get(event.id, "") + event.text)[-2 * LIVE_TAIL_CHARS :]
            self._tails[event.id] = tail
            content = live_output(tail)
            return [ToolCallProgress(tool_call_id=process_call_id(event.id), content=content)]
        return [self._exit(event.process)]

    def _start(self, info: ProcessInfo) -> ToolCallStart:
        self._tails[info.id] = info.tail
        title = f"{info.id} (background): {' '.join(info.command.split())}"
        return ToolCallStart(
            tool_call_id=process_call_id(info.id),
            title=title[:200],
            kind="execute",
            status="in_progress",
            content=live_output(info.tail) if info.tail else [],
            raw_input={"command": info.command, "background": True, "pid": info.pid},
        )

    def _exit(self, info: ProcessInfo) -> ToolCallProgress:
        tail = self._tails.pop(info.id, "") or info.tail
        if info.state == "exited":
            ended = f"[exited {info.exit_code} after {info.runtime_ms / 1000:.1f} s]"
        else:
            how = f" ({info.signal})" if info.signal else ""
            ended = f"[killed{how} after {info.runtime_ms / 1000:.1f} s]"
        ok = info.state == "exited" and info.exit_code == 0
        return ToolCallProgress(
            tool_call_id=process_call_id(info.id),
            status="completed" if ok else "failed",
            content=live_output(f"{tail.rstrip(chr(10))}\n{ended}".lstrip("\n")),
        )
