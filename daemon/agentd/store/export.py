"""Exporting the current branch of a session as Markdown or as one self-contained HTML page.

Both show the title, session id, cwd, creation and last-entry times, the model, then every
entry on the branch: messages by role, tool calls with their arguments, tool results
(errors marked), model changes after the first message and compaction summaries; the
agent's current plan (its latest ``todo`` list) comes right after the facts. The title
is the session's title, else its first prompt. The HTML page has inline CSS, no scripts and
no external assets (images are inlined as data URIs); assistant text is rendered as sanitised
Markdown (:mod:`agentd.store.markdown_html`), everything else is escaped; commands and diffs
are shown in full, tool output in a monospace font.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

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
from agentd.protocol.events import HookResult, PlanItem
from agentd.protocol.processes import ProcessInfo
from agentd.protocol.session_file import (
    CompactionEntry,
    Entry,
    HookEntry,
    MessageEntry,
    ModelChangeEntry,
)
from agentd.protocol.tool_details import EditDetails, ToolDetails, UndoEditDetails, WriteDetails
from agentd.store.file import SessionFile
from agentd.store.markdown_html import markdown_to_html

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _facts(session: SessionFile) -> list[tuple[str, str]]:
    path = session.path_to_leaf()
    model = session.model()
    facts = [
        ("Session", session.header.id),
        ("Directory", session.header.cwd),
        ("Created", session.header.created_at),
    ]
    if path:
        facts.append(("Last entry", path[-1].timestamp))
    if model is not None:
        facts.append(("Model", f"{model[0]}/{model[1]}"))
    if session.header.parent_session:
        at = session.header.parent_entry_id
        forked = session.header.parent_session + (f" at entry {at}" if at else "")
        facts.append(("Forked from", forked))
    return facts


def _title(session: SessionFile) -> str:
    title = session.title()
    if title:
        return title
    for entry in session.path_to_leaf():
        if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
            first = next(iter(_plain(entry.message.content)), "").strip().splitlines()
            if first:
                return first[0] if len(first[0]) <= 80 else first[0][:79] + "…"
    return f"Session {session.header.id}"


def _entries(session: SessionFile) -> list[Entry]:
    """The branch without the model changes before the first message (the model the session
    started with is in the facts)."""
    entries = session.path_to_leaf()
    first = next((i for i, e in enumerate(entries) if isinstance(e, MessageEntry)), len(entries))
    return [e for i, e in enumerate(entries) if i >= first or not isinstance(e, ModelChangeEntry)]


def _arguments(call: ToolCall) -> str:
    return json.dumps(call.arguments, indent=2, ensure_ascii=False)


def _process_text(process: ProcessInfo) -> str:
    """One background process in a line: id, state, runtime, output size, command."""
    state: str = process.state
    if state == "exited":
        state = f"exited {process.exit_code}"
    elif state == "killed" and process.signal:
        state = f"killed ({process.signal})"
    about = f" ({process.description})" if process.description else ""
    return (
        f"{process.id}: {process.command}{about} - {state}, {process.runtime_ms / 1000:.1f} s, "
        f"{process.output_bytes} bytes of output"
    )


# --- Markdown -------------------------------------------------------------------------------


def export_markdown(session: SessionFile, processes: Sequence[ProcessInfo] = ()) -> str:
    """The current branch of ``session`` as a Markdown document; ``processes``: the
    session's background processes (listed after the plan)."""
    parts = [f"# {_title(session)}", ""]
    parts += [f"- **{name}:** {value}" for name, value in _facts(session)]
    plan = session.plan()
    if plan:
        parts += ["", "## Plan", ""]
        parts += [f"- [{'x' if p.status == 'completed' else ' '}] {_plan_text(p)}" for p in plan]
    if processes:
        parts += ["", "## Background processes", ""]
        parts += [f"- {_md_inline(_process_text(p))}" for p in processes]
    for entry in _entries(session):
        lines = _markdown_entry(entry)
        if lines:
            parts += ["", *lines]
    return "\n".join(parts) + "\n"


def _markdown_entry(entry: Entry) -> list[str]:
    if isinstance(entry, ModelChangeEntry):
        return [f"*Model changed to {entry.provider}/{entry.model}.*"]
    if isinstance(entry, CompactionEntry):
        return ["## Summary of earlier messages", "", _quote(entry.summary)]
    if isinstance(entry, HookEntry) and entry.hook.decision == "block":
        return [f"*{_md_inline(hook_block_text(entry.hook))}*"]
    if not isinstance(entry, MessageEntry):
        return []
    message = entry.message
    if isinstance(message, UserMessage) and message.command is not None:
        expansion = "\n".join(_markdown_blocks(message.content))
        return [
            "## User",
            "",
            *_fenced(message.command),
            "",
            "Expanded prompt:",
            "",
            _quote(expansion),
        ]
    if isinstance(message, UserMessage):
        return ["## User", "", *_markdown_blocks(message.content)]
    if isinstance(message, ToolResultMessage):
        status = " (error)" if message.is_error else ""
        head = f"### Result of `{message.tool_name}`{status}"
        return [head, "", *_fenced("\n".join(_plain(message.content)))]
    lines = ["## Assistant", ""]
    for block in message.content:
        if isinstance(block, ToolCall):
            lines += [f"### Tool call `{block.name}`", "", *_fenced(_arguments(block), "json")]
        elif isinstance(block, ThinkingContent):
            lines += [_quote(block.thinking), ""]
        elif isinstance(block, ServerToolCall):
            lines += [f"### Provider-side `{block.name}`", "", *_fenced(block.result)]
        else:
            lines += [block.text, ""]
    if message.error_message:
        lines += [f"**Error:** {message.error_message}"]
    return lines


def _markdown_blocks(blocks: list[TextContent | ImageContent]) -> list[str]:
    return [
        block.text if isinstance(block, TextContent) else f"*[image: {block.mime_type}]*"
        for block in blocks
    ]


def _plain(blocks: list[TextContent | ImageContent]) -> list[str]:
    return [
        block.text if isinstance(block, TextContent) else f"[image: {block.mime_type}]"
        for block in blocks
    ]


def _fenced(text: str, language: str = "") -> list[str]:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text, fence]


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


# --- HTML -----------------------------------------------------------------------------------

_CSS = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#1d1d1f;background:#fafafa}
h1{font-size:1.5rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}
dt{font-weight:600}dd{margin:0}
.entry{border-left:4px solid #ccc;background:#fff;margin:1rem 0;padding:.5rem 1rem;
border-radius:4px}
.role{font-size:.8rem;font-weight:700;text-transform:uppercase;color:#555}
.user{border-color:#2f6fde}.assistant{border-color:#2a9d5c}.tool{border-color:#8a8a8a}
.error{border-color:#d0312d;background:#fff3f3}.note{border-color:#c89b00;font-style:italic}
.thinking{color:#666;font-style:italic;white-space:pre-wrap}
.text{white-space:pre-wrap}.markdown>:first-child{margin-top:0}
pre,code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f0f0f0;padding:.5rem;overflow-x:auto;white-space:pre-wrap}
.call{font-family:ui-monospace,monospace;font-weight:600;margin:.5rem 0 .2rem}
.diff .add{color:#116329;background:#e6ffec}.diff .del{color:#82071e;background:#ffebe9}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem}
summary{cursor:pointer;font-family:monospace}img{max-width:100%}
.plan{list-style:none;padding-left:.2rem;font-style:normal}
"""


def export_html(session: SessionFile, processes: Sequence[ProcessInfo] = ()) -> str:
    """The current branch of ``session`` as one HTML document (``processes``: as
    :func:`export_markdown`)."""
    title = html.escape(_title(session))
    facts = "".join(
        f"<dt>{html.escape(name)}</dt><dd>{html.escape(value)}</dd>"
        for name, value in _facts(session)
    )
    body = "\n".join(_html_entry(entry) for entry in _entries(session))
    plan = session.plan()
    if plan:
        items = "".join(f"<li>{_e(_plan_text(p, mark=True))}</li>" for p in plan)
        body = _box("note plan", "plan", f'<ul class="plan">{items}</ul>') + "\n" + body
    if processes:
        items = "".join(f"<li>{_e(_process_text(p))}</li>" for p in processes)
        body = _box("note", "background processes", f"<ul>{items}</ul>") + "\n" + body
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_CSS}</style></head>\n"
        f"<body><h1>{title}</h1><dl>{facts}</dl>\n{body}\n</body></html>\n"
    )


def _html_entry(entry: Entry) -> str:
    if isinstance(entry, ModelChangeEntry):
        return _box("note", "model", f"Model changed to {_e(entry.provider)}/{_e(entry.model)}")
    if isinstance(entry, CompactionEntry):
        return _box("note", "summary of earlier messages", _text(entry.summary))
    if isinstance(entry, HookEntry) and entry.hook.decision == "block":
        return _box("note hook", "hook", _e(hook_block_text(entry.hook)))
    if not isinstance(entry, MessageEntry):
        return ""
    message = entry.message
    if isinstance(message, UserMessage):
        inner = "".join(map(_html_block, message.content))
        if message.command is not None:  # a custom command: as typed, then its expansion
            typed = f'<pre class="output">{_e(message.command)}</pre>'
            inner = f'{typed}<div class="thinking">{inner}</div>'
        return _box("user", "user", inner)
    if isinstance(message, ToolResultMessage):
        label = f"result of {message.tool_name}" + (" (error)" if message.is_error else "")
        output = "\n".join(_plain(message.content))
        inner = f'<pre class="output">{_e(output)}</pre>' + _diff(message.details)
        details = f"<details open><summary>{_e(label)}</summary>{inner}</details>"
        return _box("tool error" if message.is_error else "tool", "tool result", details)
    return _html_assistant(message)


def _html_assistant(message: AssistantMessage) -> str:
    parts = [
        _markdown(block.text) if isinstance(block, TextContent) else _html_block(block)
        for block in message.content
    ]
    if message.error_message:
        parts.append(f"<p><strong>Error:</strong> {_e(message.error_message)}</p>")
    kind = "assistant error" if message.stop_reason == "error" else "assistant"
    return _box(kind, f"assistant · {message.model}", "".join(parts))


def _html_block(
    block: TextContent | ImageContent | ThinkingContent | ToolCall | ServerToolCall,
) -> str:
    if isinstance(block, ServerToolCall):  # the provider's search: the call and its result
        head = f'<div class="call">{_e(block.name)} (provider)</div>'
        return head + f'<pre class="args">{_e(block.result)}</pre>'
    if isinstance(block, TextContent):
        return _text(block.text)
    if isinstance(block, ThinkingContent):
        return f'<div class="thinking">{_e(block.thinking)}</div>'
    if isinstance(block, ToolCall):
        return _call(block)
    return _image(block)


def _call(call: ToolCall) -> str:
    """A tool call, shown in full: ``$ command`` for bash, the arguments otherwise."""
    command = call.arguments.get("command") if call.name == "bash" else None
    shown = f"$ {command}" if isinstance(command, str) else _arguments(call)
    body = f'<div class="call">{_e(call.name)}</div><pre class="args">{_e(shown)}</pre>'
    if call.parse_error:
        body += f"<p><strong>Invalid arguments:</strong> {_e(call.parse_error)}</p>"
    return body


def _diff(details: ToolDetails | None) -> str:
    """An edit's or write's unified diff, lines coloured by kind; empty when there is none."""
    if not isinstance(details, WriteDetails | EditDetails | UndoEditDetails) or not details.diff:
        return ""
    diff = details.diff
    lines = []
    for line in diff.splitlines():
        kind = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        lines.append(f'<span class="{kind}">{_e(line)}</span>' if kind else _e(line))
    return '<pre class="diff">' + "\n".join(lines) + "</pre>"


def _markdown(text: str) -> str:
    return f'<div class="markdown">{markdown_to_html(text)}</div>'


def _image(block: ImageContent) -> str:
    if block.mime_type not in _IMAGE_TYPES or not _BASE64.fullmatch(block.data):
        return f"<p>[image: {_e(block.mime_type)}]</p>"
    return f'<img alt="image" src="data:{block.mime_type};base64,{block.data}">'


def _plan_text(item: PlanItem, *, mark: bool = False) -> str:
    """A plan step's text: in progress marked "(in progress)", ``mark`` adds ☑/☐."""
    box = ("☑ " if item.status == "completed" else "☐ ") if mark else ""
    return box + item.content + (" (in progress)" if item.status == "in_progress" else "")


def hook_block_text(hook: HookResult) -> str:
    """``⊘ pre_tool hook blocked bash: <reason> (scripts/policy-check)`` on one line."""
    what = f" {hook.tool}" if hook.tool else " the prompt" if hook.event == "user_prompt" else ""
    reason = " ".join((hook.reason or "").split())
    return f"⊘ {hook.event} hook blocked{what}: {reason} ({hook.command})"


def _md_inline(text: str) -> str:
    """``text`` safe inside Markdown emphasis (its markup characters escaped)."""
    return re.sub(r"([\\`*_\[\]<>|])", r"\\\1", text)


def _box(kind: str, role: str, inner: str) -> str:
    return f'<section class="entry {kind}"><div class="role">{_e(role)}</div>{inner}</section>'


def _text(text: str) -> str:
    return f'<div class="text">{_e(text)}</div>'


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)
