"""The terminal renderer: streamed text, compact tool lines, notices and the footer."""

from __future__ import annotations

import io

from agentctl.render.footer import FinalText, format_footer
from agentctl.render.stream import TerminalRenderer
from agentctl.render.style import Style
from agentctl.run.outcome import RunSummary
from agentd.protocol.content import AssistantMessage, TextContent, ToolCall, UserMessage
from agentd.protocol.events import (
    AgentStart,
    ErrorEvent,
    Event,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    PermissionRequest,
    PermissionResolved,
    Retry,
    SessionWarning,
    TextDelta,
    ThinkingDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnStart,
)
from agentd.protocol.tool_details import BashDetails, EditDetails
from tests.harness import wait_until_async


def assistant(text: str) -> AssistantMessage:
    return AssistantMessage(
        id="m1", content=[TextContent(text=text)], provider="mock", model="mock-1"
    )


def render(events: list[Event], **options: object) -> str:
    out = io.StringIO()
    renderer = TerminalRenderer(out, style=Style(False), **options)  # type: ignore[arg-type]
    for event in events:
        renderer.event(event)
    renderer.close()
    return out.getvalue()


def bash_details(command: str) -> BashDetails:
    """A bash command that exited 0 after 1.5 s."""
    return BashDetails(
        command=command,
        exit_code=0,
        signal=None,
        timed_out=False,
        duration_ms=1500.0,
        truncated=False,
        spill_path=None,
        total_bytes=0,
        cwd="/p",
    )


def edit_details(added: int, removed: int) -> EditDetails:
    return EditDetails(
        path="/p/src/app.py",
        replacements=1,
        diff="",
        first_changed_line=1,
        added=added,
        removed=removed,
    )


def tool_events(call_id: str, name: str, args: dict[str, object], **end: object) -> list[Event]:
    return [
        ToolExecutionStart(tool_call_id=call_id, name=name, args=args),
        ToolExecutionEnd(
            tool_call_id=call_id,
            name=name,
            result=[TextContent(text=str(end.pop("text", "ok")))],
            **end,  # type: ignore[arg-type]
        ),
    ]


def test_text_streams_and_ends_with_a_newline() -> None:
    """Text deltas are written as they come; the message end closes the line."""
    events: list[Event] = [
        MessageStart(message_id="m1", role="assistant"),
        MessageUpdate(delta=TextDelta(index=0, text="Hello")),
        MessageUpdate(delta=TextDelta(index=0, text=", world")),
        MessageEnd(message=assistant("Hello, world")),
    ]
    assert render(events) == "Hello, world\n"


def test_thinking_then_text_are_on_separate_lines() -> None:
    """Switching from reasoning to text starts a new line."""
    events: list[Event] = [
        MessageUpdate(delta=ThinkingDelta(index=0, text="hmm")),
        MessageUpdate(delta=TextDelta(index=1, text="Yes.")),
        MessageEnd(message=assistant("Yes.")),
    ]
    assert render(events) == "hmm\nYes.\n"


def test_tool_calls_are_one_compact_line_each() -> None:
    """Without animation every call prints one line when it ends, with its outcome."""
    events: list[Event] = [
        MessageUpdate(delta=TextDelta(index=0, text="Running tests")),
        *tool_events("c1", "bash", {"command": "npm test"}, details=bash_details("npm test")),
        *tool_events("c2", "edit", {"path": "/p/src/app.py"}, details=edit_details(3, 1)),
    ]
    assert render(events, cwd="/p") == (
        "Running tests\n● bash  npm test  exit 0 · 1.5s\n● edit  src/app.py  (+3 −1)\n"
    )


def test_failed_tool_call_shows_the_error() -> None:
    """An error result shows its first line after the call."""
    events = tool_events("c1", "read", {"path": "missing.txt"}, is_error=True, text="No such file")
    assert render(events) == "✗ read  missing.txt  No such file\n"


def test_notices_for_retry_errors_refusals_and_warnings() -> None:
    """Retries, error events, refused permissions and session warnings get a line each."""
    events: list[Event] = [
        Retry(attempt=1, max_attempts=3, delay_ms=2000, error="overloaded"),
        ErrorEvent(message="provider said no"),
        PermissionResolved(tool_call_id="c1", outcome="reject_once", reason="no client"),
        PermissionResolved(tool_call_id="c2", outcome="allow_once"),
        SessionWarning(message="torn line repaired", line=7),
    ]
    assert render(events).splitlines() == [
        "↻ retry 1/3 in 2.0s: overloaded",
        "✗ provider said no",
        "⊘ permission refused: no client",
        "! torn line repaired (line 7)",
    ]


def test_user_messages_only_when_following() -> None:
    """attach shows the prompts others send; send does not echo the user's own prompt."""
    user = MessageEnd(message=UserMessage(id="u1", content=[TextContent(text="hi")], timestamp=0))
    assert render([user]) == ""
    assert render([user], show_user=True) == "› hi\n"
    request = PermissionRequest(tool_call_id="c1", tool="bash", args={"command": "ls"})
    assert render([request]) == ""
    assert render([request], show_user=True) == "? bash  ls  waits for approval\n"


def test_footer_summarises_the_run() -> None:
    """The footer names how the run ended, turns, tokens, cost, time and the session."""
    summary = RunSummary(
        session_id="s1",
        stop_reason="end_turn",
        turns=2,
        usage={"inputTokens": 1234, "outputTokens": 56},
        cost=0.0012,
        duration_ms=4200,
    )
    assert format_footer(Style(False), summary) == (
        "── done · 2 turns · 1.2k in / 56 out tokens · $0.0012 · 4.2s · session s1"
    )
    summary.timed_out = True
    assert format_footer(Style(False), summary).startswith("── timed out ·")


def test_footer_prints_the_error_in_red() -> None:
    """With colour on, the error line is red and the footer dim."""
    out = io.StringIO()
    renderer = TerminalRenderer(out, style=Style(True))
    renderer.footer(RunSummary(session_id="s1", stop_reason="error", error="boom"))
    assert "\x1b[31m✗ boom\x1b[0m" in out.getvalue()


def test_footer_does_not_repeat_an_error_event() -> None:
    """A failed run's error event is shown once, not again in the footer."""
    out = io.StringIO()
    renderer = TerminalRenderer(out, style=Style(False))
    renderer.event(ErrorEvent(message="HTTP 500: boom", code="provider_error"))
    renderer.footer(RunSummary(session_id="s1", stop_reason="error", error="HTTP 500: boom"))
    assert out.getvalue().count("✗ HTTP 500: boom") == 1


async def test_spinner_redraws_in_place_and_ends_with_the_outcome() -> None:
    """Animated, a running call shows a spinner line that is replaced by its final line."""
    out = io.StringIO()
    renderer = TerminalRenderer(out, style=Style(False), animate=True)
    details = bash_details("sleep 1")
    start, end = tool_events("c1", "bash", {"command": "sleep 1"}, details=details)
    renderer.event(start)
    await wait_until_async(lambda: out.getvalue().count("\r\x1b[2K") >= 2)  # draw, redraw
    renderer.event(end)
    renderer.close()
    text = out.getvalue()
    assert text.count("\r\x1b[2K") >= 3  # first draw, at least one redraw, the final line
    assert "⠋ bash  sleep 1" in text
    assert text.endswith("\r\x1b[2K● bash  sleep 1  exit 0 · 1.5s\n")


async def test_text_during_a_running_call_erases_its_spinner() -> None:
    """Output arriving while a call runs erases the spinner line first; the call's only line
    in the scrollback is its final one."""
    out = io.StringIO()
    renderer = TerminalRenderer(out, style=Style(False), animate=True)
    start, end = tool_events("c1", "bash", {"command": "make"})
    renderer.event(start)
    renderer.event(MessageUpdate(delta=TextDelta(index=0, text="note")))
    renderer.event(end)
    renderer.close()
    text = out.getvalue()
    assert text.endswith("⠋ bash  make\r\x1b[2Knote\n● bash  make\n")
    assert "○" not in text


async def test_a_second_wait_replaces_the_first_spinner_in_place() -> None:
    """agent_start then turn_start both start the wait: the spinner is redrawn on its own line,
    never pushed up into the scrollback by a newline."""
    out = io.StringIO()
    renderer = TerminalRenderer(out, style=Style(False), animate=True)
    renderer.event(AgentStart())
    renderer.event(TurnStart(turn=1))
    renderer.event(MessageUpdate(delta=TextDelta(index=0, text="hi")))
    renderer.close()
    assert "\n" not in out.getvalue().split("hi")[0]  # nothing but redraws before the text


async def test_a_call_interrupted_leaves_no_live_line() -> None:
    """Closing the renderer while a call runs (Ctrl-C) erases its spinner; nothing stale."""
    out = io.StringIO()
    renderer = TerminalRenderer(out, style=Style(False), animate=True)
    start, _ = tool_events("c1", "bash", {"command": "sleep 30"})
    renderer.event(start)
    renderer.close()
    assert out.getvalue().endswith("⠋ bash  sleep 30\r\x1b[2K")


def test_final_text_keeps_the_last_assistant_text() -> None:
    """--quiet prints the last assistant message that had text."""
    final = FinalText()
    final.event(MessageEnd(message=assistant("first")))
    final.event(MessageEnd(message=assistant("  ")))
    final.event(MessageEnd(message=assistant("second")))
    assert final.text == "second"


def test_tool_line_without_a_start_event_uses_the_requested_arguments() -> None:
    """If the call never started (refused, cancelled), its line still says what it was."""
    message = AssistantMessage(
        id="m1",
        content=[ToolCall(id="c9", name="write", arguments={"path": "/p/hello.py"})],
        provider="mock",
        model="m",
    )
    end = ToolExecutionEnd(
        tool_call_id="c9",
        name="write",
        result=[TextContent(text="Permission denied")],
        is_error=True,
    )
    assert render([MessageEnd(message=message), end], cwd="/p") == (
        "✗ write  hello.py  Permission denied\n"
    )
