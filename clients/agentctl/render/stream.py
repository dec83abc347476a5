"""Human-readable rendering of agent events for the terminal (and for plain pipes).

:class:`TerminalRenderer` streams assistant text as it arrives and shows each tool call as one
compact line (``● bash  npm test  exit 0 · 0.4s``; a failed call, including a command that
exited non-zero, gets ``✗`` instead of ``●``, so it stands out without colour too), and under
a failed call (every call with ``verbose``) the last lines of its output in a ``⎿`` block. With
``animate`` (a terminal without ``NO_COLOR``) a running call shows a spinner on its line,
redrawn in place, and so does the wait for the model (from the prompt to the first token,
between turns, and a retry's countdown); without it a line is printed once, when the call ends.
Colour comes from :class:`~agentctl.render.style.Style`.

The renderer never raises on unexpected event contents and never reads input; callers that
prompt the user call :meth:`TerminalRenderer.pause` first. Nothing of an event reaches the
terminal raw: control characters and bidi overrides in it are shown escaped (``\x1b``), so
text cannot set the title, write the clipboard or redraw what was printed.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import TYPE_CHECKING, Any, TextIO

from agentctl.render.footer import format_footer
from agentctl.render.mdterm import MarkdownStream
from agentctl.render.nesting import Subagents
from agentctl.render.outputblock import DONE_MARK, FAILED_MARK, output_lines, output_text, redundant
from agentctl.render.processfmt import process_line
from agentctl.render.style import Style, terminal_height, terminal_width
from agentctl.render.toolfmt import (
    call_failed,
    describe_call,
    describe_outcome,
    format_count,
    format_seconds,
    problem_lines,
    shorten,
)
from agentctl.render.waiting import WAITING_LABEL, Call, Wait, wait_text
from agentctl.render.wording import cli_words
from agentctl.run.outcome import RunSummary
from agentd.protocol.content import AssistantMessage, TextContent, UserMessage
from agentd.protocol.controls import escape_controls, scrub
from agentd.protocol.events import (
    AgentEnd,
    AgentStart,
    CompactionEnd,
    CompactionStart,
    ErrorEvent,
    Event,
    HookResult,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    PermissionRequest,
    PermissionResolved,
    PlanUpdate,
    Retry,
    SessionRewound,
    SessionWarning,
    SubagentStart,
    TextDelta,
    ThinkingDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnStart,
)
from agentd.protocol.processes import ProcessExit, ProcessStart
from agentd.protocol.questions import QuestionResolved

if TYPE_CHECKING:
    from agentctl.render.mdterm import MarkdownStream

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPIN_INTERVAL_S = 0.1
_CLEAR_LINE = "\r\x1b[2K"


_STATUS = re.compile(r"\b([45]\d\d)\b")


class TerminalRenderer:
    """Writes events to ``out`` for a human reader (see the module docstring).

    ``show_user`` also prints user messages (after a chevron) and pending permission requests,
    for following a session someone else drives. ``show_text`` False leaves out the assistant's
    text (progress on stderr while stdout gets the answer); ``markdown`` renders it as Markdown,
    block by block (:mod:`agentctl.render.mdterm`; for terminals). ``verbose`` shows the last
    lines of every call's output under it, not only a failed one's
    (:mod:`agentctl.render.outputblock`). ``animate`` needs a running asyncio loop.
    """

    def __init__(
        self,
        out: TextIO,
        *,
        style: Style,
        animate: bool = False,
        cwd: str | None = None,
        show_user: bool = False,
        show_text: bool = True,
        markdown: bool = False,
        verbose: bool = False,
    ) -> None:
        self.out = out
        self.verbose = verbose
        self.style = style
        self.animate = animate
        self.cwd = cwd
        self.show_user = show_user
        self.show_text = show_text
        self._markdown: MarkdownStream | None = None
        self._raw = ""
        if markdown:
            self._markdown = MarkdownStream(width=terminal_width(), color=style.enabled)
        self._wait: Wait | None = None
        self._at_line_start = True
        self._block: str | None = None
        self._calls: dict[str, Call] = {}
        self._requested: dict[str, tuple[str, dict[str, Any]]] = {}
        self._live: str | None = None
        self._tick: asyncio.TimerHandle | None = None
        self._frame = 0
        self._errors_shown: set[str] = set()
        self.subagents = Subagents(style, self.line, cwd)
        self._plan_rows = 0

    # --- public -----------------------------------------------------------------------------

    def event(self, event: Event, session_id: str | None = None) -> None:
        """Render one event (unknown or uninteresting ones are ignored); an event of a
        subagent's session (``session_id`` a child's) is drawn nested under its task call
        (:mod:`agentctl.render.nesting`). Every string in it is shown with its control characters
        escaped (:func:`agentd.protocol.controls.scrub`): model text, tool output, names."""
        event = scrub(event)
        if self.subagents.knows(session_id):
            assert session_id is not None
            self.subagents.event(session_id, event)
            return
        match event:
            case MessageStart():
                self._block = None
            case MessageUpdate(delta=TextDelta(text=text)):
                self._stream("text", text)
            case MessageUpdate(delta=ThinkingDelta(text=text)):
                self._stream("thinking", text)
            case MessageEnd(message=message):
                self._message_end(message)
            case ToolExecutionStart():
                self._tool_start(event)
            case ToolExecutionEnd():
                self._tool_end(event)
            case AgentStart() | TurnStart():
                self._start_wait()
            case AgentEnd():
                self._end_wait()
            case SubagentStart():
                self.subagents.started(event)
            case PlanUpdate():
                self._plan(event)
            case _:
                self._notice_event(event)

    def pause(self) -> None:
        """Stop any spinner and move to a fresh line (before asking the user something)."""
        self._end_wait()
        self._flush_markdown()
        self._hide_live()
        self._line_start()
        self.out.flush()

    def footer(self, summary: RunSummary) -> None:
        """Print the run's error (if any) and the one-line summary."""
        self.pause()
        if summary.error and summary.error not in self._errors_shown:
            self.line(self.style.red(f"✗ {escape_controls(summary.error)}"))
        self.line(format_footer(self.style, summary))

    def line(self, text: str) -> None:
        """Print ``text`` on a line of its own."""
        self.pause()
        self.out.write(text + "\n")
        self.out.flush()
        self._plan_rows = 0

    def close(self) -> None:
        """Stop the spinner (idempotent)."""
        self._stop_ticking()
        self.pause()

    # --- assistant text ---------------------------------------------------------------------

    def _stream(self, kind: str, text: str) -> None:
        if not text or not self.show_text:
            return
        self._end_wait()
        self._hide_live()
        if self._block not in (None, kind):
            self._flush_markdown()
            self._line_start()
        self._block = kind
        if kind == "text" and self._markdown is not None:
            self._stream_markdown(self._markdown, text)
            return
        self._write(self.style.dim(text) if kind == "thinking" else text)

    def _stream_markdown(self, markdown: MarkdownStream, text: str) -> None:
        """Show the line being written raw; once complete, replace it by its rendering.
        Without ``animate`` (no cursor movement) only complete lines are shown."""
        rendered = markdown.feed(text)
        partial = markdown.partial_line
        if not self.animate:
            self._write(rendered)
            return
        if rendered:
            self._erase_raw()
            self._write(rendered)
        if partial is None:
            self._start_wait(label="writing…")
        elif partial.startswith(self._raw):
            self._write(partial[len(self._raw) :])
            self._raw = partial

    def _erase_raw(self) -> None:
        """Remove the raw partial line from the screen (when it still fits on it)."""
        if not self._raw:
            return
        rows = -(-len(self._raw) // max(1, self._markdown.width if self._markdown else 80))
        if rows == 1:  # erase the line alone (some terminals keep a screen cleared from its top)
            self.out.write(_CLEAR_LINE)
            self._at_line_start = True
        elif rows < terminal_height():
            self.out.write(f"\x1b[{rows - 1}A\r\x1b[J")
            self._at_line_start = True
        else:
            self._line_start()
        self._raw = ""

    def _flush_markdown(self) -> None:
        if self._markdown is not None:
            self._end_wait()
            rest = self._markdown.flush()
            if rest:
                self._erase_raw()
            self._raw = ""
            self._write(rest)

    def _message_end(self, message: object) -> None:
        if isinstance(message, AssistantMessage):
            self._flush_markdown()
            self._line_start()
            self._block = None
            for call in message.tool_calls():
                self._requested[call.id] = (call.name, call.arguments)
            self._resume_live()
        elif isinstance(message, UserMessage) and self.show_user:
            text = "".join(b.text for b in message.content if isinstance(b, TextContent))
            self.line(self.style.cyan(f"› {shorten(message.command or text, 200)}"))

    # --- tool calls -------------------------------------------------------------------------

    def _tool_start(self, event: ToolExecutionStart) -> None:
        summary = describe_call(event.name, event.args, self.cwd)
        self._calls[event.tool_call_id] = Call(event.name, summary, time.monotonic())
        if not self.animate:
            return
        self._end_wait()
        self._hide_live()
        self._line_start()
        self._live = event.tool_call_id
        self._draw_live()
        self._start_ticking()

    def _tool_end(self, event: ToolExecutionEnd) -> None:
        if event.name == "todo" and not event.is_error:  # its plan is what shows
            self._calls.pop(event.tool_call_id, None)
            self._forget_live(event.tool_call_id)
            return
        call = self._calls.pop(event.tool_call_id, None)
        if call is None:  # no start event: describe the call as the model asked for it
            _, args = self._requested.get(event.tool_call_id, (event.name, {}))
            call = Call(event.name, describe_call(event.name, args, self.cwd), time.monotonic())
        self._requested.pop(event.tool_call_id, None)
        text = "".join(b.text for b in event.result if isinstance(b, TextContent))
        outcome = describe_outcome(event.details, event.is_error, text)
        failed = call_failed(event.details, event.is_error)
        bullet = self.style.red(FAILED_MARK) if failed else self.style.green(DONE_MARK)
        shown = self._call_text(call.name, call.summary)
        if outcome:
            shown += "  " + (self.style.red(outcome) if failed else self.style.dim(outcome))
        self._forget_live(event.tool_call_id)
        self.line(f"{bullet} {shown}")
        for row in problem_lines(event.details):  # what the change broke, under it
            self.line(self.style.red(row) if " error: " in row else self.style.yellow(row))
        if failed or self.verbose:
            self._output_block(output_text(text, event.details), outcome)
        self._resume_live()

    def _output_block(self, text: str, outcome: str) -> None:
        """The call's last output lines under its line (unless the outcome said it all)."""
        if text and not redundant(text, outcome):
            for row in output_lines(text, self.style):
                self.line(row)

    def _forget_live(self, tool_call_id: str) -> None:
        """Erase the spinner line of the call that ended, if it is the one shown."""
        if self._live == tool_call_id:
            self._live = None
            self._stop_ticking()
            self.out.write(_CLEAR_LINE)
            self._at_line_start = True

    # --- the plan -------------------------------------------------------------------------

    def _plan(self, event: PlanUpdate) -> None:
        """The plan as a checklist. On a terminal, a plan printed right before (nothing
        written since) is redrawn in place; otherwise (and on a pipe) it is printed anew."""
        rows = plan_lines(event, self.style)
        self.pause()
        before = self._plan_rows if self.animate and self._plan_rows < terminal_height() else 0
        text = "".join(row + "\n" for row in rows)
        if before:  # each row cleared on its own: some terminals keep a screen erased whole
            text = f"\x1b[{before}A" + "".join(_CLEAR_LINE + row + "\n" for row in rows)
            if before > len(rows):
                extra = before - len(rows)
                text += (_CLEAR_LINE + "\n") * extra + f"\x1b[{extra}A"
        self.out.write(text)
        self.out.flush()
        self._plan_rows = len(rows)

    def _call_text(self, name: str, summary: str) -> str:
        return f"{self.style.bold(name)}  {summary}" if summary else self.style.bold(name)

    # --- other events -----------------------------------------------------------------------

    def _notice_event(self, event: Event) -> None:
        style = self.style
        match event:
            case Retry():
                delay = format_seconds(event.delay_ms / 1000)
                attempt = f"{event.attempt}/{event.max_attempts}"
                self.line(style.yellow(f"↻ retry {attempt} in {delay}: {shorten(event.error)}"))
                status = _STATUS.search(event.error)
                reason = status.group(1) if status else shorten(event.error, 30)
                self._start_wait(time.monotonic() + event.delay_ms / 1000, reason)
            case ErrorEvent():
                self._errors_shown.add(event.message)
                self.line(style.red(f"✗ {event.message}"))
            case PermissionRequest() if self.show_user:
                summary = describe_call(event.tool, event.args, self.cwd)
                self.line(style.yellow(f"? {event.tool}  {summary}  waits for approval"))
            case PermissionResolved() if event.outcome.startswith("reject"):
                reason = f": {cli_words(event.reason)}" if event.reason else ""
                self.line(style.red(f"⊘ permission refused{reason}"))
            case QuestionResolved(answers=None):
                self.line(style.yellow(f"? question not answered: {event.reason}"))
            case CompactionStart():
                self.line(style.dim(f"… compacting the conversation ({event.reason})"))
                self._start_wait()
            case CompactionEnd(error=str() as error):
                self.line(style.red(f"✗ compaction failed: {error}"))
            case CompactionEnd():
                self.line(style.dim(f"… compacted {format_count(event.tokens_before)} tokens"))
            case SessionWarning():
                where = f" (line {event.line})" if event.line is not None else ""
                self.line(style.yellow(f"! {event.message}{where}"))
            case HookResult(decision="block"):
                self.line(style.red(f"⊘ {hook_block_line(event)}"))
            case SessionRewound():
                self.line(style.yellow(f"↶ {rewound_line(event)}"))
            case ProcessStart() | ProcessExit():
                started = isinstance(event, ProcessStart)
                self.line(style.cyan(process_line(event.process, started=started)))
            case _:
                pass

    # --- low-level output -------------------------------------------------------------------

    def _write(self, text: str) -> None:
        if not text:
            return
        self.out.write(text)
        self.out.flush()
        self._at_line_start = text.endswith("\n")
        self._plan_rows = 0

    def _line_start(self) -> None:
        if not self._at_line_start:
            self.out.write("\n")
            self._at_line_start = True

    def _start_wait(
        self, until: float | None = None, reason: str = "", label: str = WAITING_LABEL
    ) -> None:
        """Show the waiting spinner (animated output only, and only while no call runs)."""
        if not self.animate or self._live is not None:
            return
        if self._wait is not None:  # already on screen: redrawn in place, not left behind
            self.out.write(_CLEAR_LINE)
            self._at_line_start = True
        self._line_start()
        self._wait = Wait(time.monotonic(), until, reason, label)
        self._draw_live()
        self._start_ticking()

    def _end_wait(self) -> None:
        """Erase the waiting spinner, if shown."""
        if self._wait is None:
            return
        self._wait = None
        self.out.write(_CLEAR_LINE)
        self._at_line_start = True
        if self._live is None:
            self._stop_ticking()

    def _draw_live(self) -> None:
        frame = self.style.cyan(SPINNER_FRAMES[self._frame % len(SPINNER_FRAMES)])
        if self._live is None and self._wait is not None:
            self.out.write(f"{_CLEAR_LINE}{frame} {wait_text(self._wait, self.style)}")
            self.out.flush()
            self._at_line_start = False
            return
        call = self._calls.get(self._live or "")
        if call is None:
            return
        elapsed = time.monotonic() - call.started
        suffix = self.style.dim(f"  {format_seconds(elapsed)}") if elapsed >= 1 else ""
        self.out.write(f"{_CLEAR_LINE}{frame} {self._call_text(call.name, call.summary)}{suffix}")
        self.out.flush()
        self._at_line_start = False

    def _hide_live(self) -> None:
        """Erase a running call's spinner line (output comes first); the call's one final line
        is printed when it ends, and :meth:`_resume_live` draws the spinner again meanwhile.
        Nothing of the live display stays in the scrollback."""
        if self._live is None:
            return
        self._live = None
        self._stop_ticking()
        self.out.write(_CLEAR_LINE)
        self._at_line_start = True

    def _resume_live(self) -> None:
        """Show the spinner of a call still running (after text or a prompt hid it)."""
        if self._live is None and self._wait is None and self._calls and self.animate:
            self._line_start()
            self._live = next(iter(self._calls))
            self._draw_live()
            self._start_ticking()

    def _start_ticking(self) -> None:
        if self._tick is None:
            self._tick = asyncio.get_running_loop().call_later(SPIN_INTERVAL_S, self._on_tick)

    def _stop_ticking(self) -> None:
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None

    def _on_tick(self) -> None:
        self._tick = None
        if self._live is None and self._wait is None:
            return
        self._frame += 1
        self._draw_live()
        self._start_ticking()


PLAN_MARKS = {"completed": "✔", "in_progress": "▸", "pending": "○"}
"""How each plan step's status shows (readable without colour too)."""


def hook_block_line(event: HookResult) -> str:
    """``pre_tool hook blocked bash: <reason> (scripts/policy-check)`` (one line; the failed
    hooks' lines are their ``session_warning``)."""
    what = f" {event.tool}" if event.tool else " the prompt" if event.event == "user_prompt" else ""
    reason = shorten(" ".join((event.reason or "").split()), 200)
    return f"{event.event} hook blocked{what}: {reason} ({shorten(event.command, 60)})"


def rewound_line(event: SessionRewound) -> str:
    """``session rewound to before: PROMPT (…discarded)``: a terminal cannot take back the
    lines it printed for the discarded turns, so it says that they are gone."""
    prompt = shorten(" ".join(event.prompt.split()), 80)
    return f"session rewound to before: {prompt} (what is above from there on was discarded)"


def plan_lines(event: PlanUpdate, style: Style) -> list[str]:
    """The plan as lines: a heading with progress, then one line per step."""
    if not event.entries:
        return [style.dim("◆ plan cleared")]
    done = sum(1 for entry in event.entries if entry.status == "completed")
    rows = [style.bold(f"◆ plan  {done}/{len(event.entries)} done")]
    for entry in event.entries:
        text = f"  {PLAN_MARKS[entry.status]} {entry.content}"
        if entry.status == "completed":
            text = style.dim(text)
        elif entry.status == "in_progress":
            text = style.cyan(text)
        rows.append(text)
    return rows
