"""Plain-text views of stored sessions: the session table and a conversation transcript.

A call is marked as the live view marks it (``●``, ``✗`` when it failed) and a failed one is
followed by the last lines of its output (:mod:`agentctl.render.outputblock`).

Titles, directories, messages and tool names come from session files, so their control
characters are shown escaped (:func:`agentd.protocol.controls.scrub`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentctl.render.outputblock import DONE_MARK, FAILED_MARK, output_lines, output_text
from agentctl.render.style import Style
from agentctl.render.toolfmt import call_failed, describe_call, shorten
from agentd.protocol.content import (
    AssistantMessage,
    ImageContent,
    Message,
    ServerToolCall,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from agentd.protocol.controls import scrub
from agentd.protocol.session_file import SessionSummary


def short_time(stamp: str) -> str:
    """``2025-01-02T03:04:05.678Z`` → ``2025-01-02 03:04``."""
    return stamp[:16].replace("T", " ") if len(stamp) >= 16 else stamp


def nest_sessions(sessions: Sequence[SessionSummary]) -> list[tuple[int, SessionSummary]]:
    """``(depth, session)`` in display order: each subagent's session right under its parent
    (``parent_session_id``), indented one level per generation, oldest child first; a child
    whose parent is not in ``sessions`` stays where it is, at depth 0."""
    present = {item.session_id for item in sessions}
    children: dict[str, list[SessionSummary]] = {}
    for item in sessions:
        if item.parent_session_id in present:
            children.setdefault(item.parent_session_id or "", []).append(item)
    ordered: list[tuple[int, SessionSummary]] = []

    def add(item: SessionSummary, depth: int) -> None:
        ordered.append((depth, item))
        for child in sorted(children.get(item.session_id, []), key=lambda c: c.created_at):
            add(child, depth + 1)

    for item in sessions:
        if item.parent_session_id not in present:
            add(item, 0)
    return ordered


def format_session_table(sessions: Sequence[SessionSummary], style: Style) -> str:
    """One line per session: id, last update, entries, title (or directory), subagents'
    sessions indented under their parent (``└`` and the profile's task title), a fork
    marked ``⑂ fork of PARENT at ENTRY`` (its branch point). Empty for none."""
    if not sessions:
        return ""
    rows_in_order = nest_sessions([scrub(item) for item in sessions])
    ids = [
        ("  " * (depth - 1) + "└ " if depth else "") + s.session_id for depth, s in rows_in_order
    ]
    width = max(len(text) for text in ids)
    header = style.dim(f"{'ID':<{width}}  {'UPDATED':<16}  {'ENTRIES':>7}  TITLE / CWD")
    rows = [header]
    for shown, (_, item) in zip(ids, rows_in_order, strict=True):
        label = shorten(item.title or item.cwd, 60) + fork_mark(item, style)
        rows.append(
            f"{shown:<{width}}  {short_time(item.updated_at):<16}  {item.entry_count:>7}  {label}"
        )
    return "\n".join(rows)


def fork_mark(item: SessionSummary, style: Style) -> str:
    """``  ⑂ fork of PARENT at ENTRY`` for a fork (``at ENTRY`` when its branch point is
    known), empty otherwise."""
    if not item.parent_session:
        return ""
    at = f" at {item.parent_entry_id}" if item.parent_entry_id else ""
    return style.dim(f"  ⑂ fork of {item.parent_session}{at}")


def _text(blocks: Sequence[object]) -> str:
    return "".join(b.text for b in blocks if isinstance(b, TextContent))


def _assistant_lines(
    message: AssistantMessage,
    style: Style,
    cwd: str | None,
    results: Mapping[str, ToolResultMessage],
    verbose: bool,
) -> list[str]:
    lines: list[str] = []
    for block in message.content:
        if isinstance(block, TextContent) and block.text.strip():
            lines.append(block.text.rstrip())
        elif isinstance(block, ThinkingContent) and block.thinking.strip():
            lines.append(style.dim(block.thinking.rstrip()))
        elif isinstance(block, ToolCall):
            lines.extend(_call_lines(block, results.get(block.id), style, cwd, verbose))
        elif isinstance(block, ServerToolCall):  # run by the provider: its result is in it
            mark = style.red(FAILED_MARK) if block.is_error else DONE_MARK
            shown = describe_call(block.name, block.arguments, cwd)
            lines.append(f"{mark} {style.bold(block.name)}  {shown}")
    if message.stop_reason == "error" and message.error_message:
        lines.append(style.red(f"✗ {message.error_message}"))
    return lines


def _call_lines(
    call: ToolCall,
    result: ToolResultMessage | None,
    style: Style,
    cwd: str | None,
    verbose: bool,
) -> list[str]:
    """A call's line (``✗`` when it failed, else ``●``), then the last lines of its output
    when it failed (of any call with ``verbose``)."""
    failed = result is not None and call_failed(result.details, result.is_error)
    mark = style.red(FAILED_MARK) if failed else DONE_MARK
    lines = [f"{mark} {style.bold(call.name)}  {describe_call(call.name, call.arguments, cwd)}"]
    if result is not None and (failed or verbose):
        lines.extend(output_lines(output_text(_text(result.content), result.details), style))
    return lines


def format_message(
    message: Message,
    style: Style,
    cwd: str | None = None,
    results: Mapping[str, ToolResultMessage] | None = None,
    verbose: bool = False,
) -> list[str]:
    """The lines that show one message in a transcript; a tool call's output comes from its
    result in ``results`` (by call id), so the result message itself shows nothing."""
    message = scrub(message)
    if isinstance(message, UserMessage):  # a custom command as typed, not its expansion
        text = (message.command or _text(message.content)).rstrip()
        return [style.cyan(f"› {text}".rstrip()), *image_marks(message.content, style)]
    if isinstance(message, AssistantMessage):
        return _assistant_lines(message, style, cwd, results or {}, verbose)
    return []


def image_marks(blocks: Sequence[object], style: Style) -> list[str]:
    """``  ▣ image 1 (image/png, 12 KB)``: one line per image of a message (an image has no
    text to show, so the transcript says it was there)."""
    images = [b for b in blocks if isinstance(b, ImageContent)]
    return [
        style.dim(f"  ▣ image {number} ({image.mime_type}, {_kilobytes(image.data)})")
        for number, image in enumerate(images, 1)
    ]


def _kilobytes(data: str) -> str:
    """The decoded size of base64 ``data``, in KB (at least 1)."""
    return f"{max(1, len(data) * 3 // 4 // 1024)} KB"


def format_transcript(
    messages: Sequence[Message], style: Style, cwd: str | None = None, *, verbose: bool = False
) -> str:
    """The whole conversation: prompts, replies and tool calls, a failed call marked ``✗``
    with the last lines of its output (with ``verbose``: every call's output)."""
    results = {m.tool_call_id: scrub(m) for m in messages if isinstance(m, ToolResultMessage)}
    lines: list[str] = []
    for message in messages:
        lines.extend(format_message(message, style, cwd, results, verbose))
    return "\n".join(lines)
