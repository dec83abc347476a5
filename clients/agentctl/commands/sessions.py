"""The small commands: ``sessions …``, ``cancel ID`` and ``status``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec

from agentctl import launch
from agentctl.client import AgentClient, DaemonUnavailable, connect
from agentctl.common import (
    UsageError,
    open_client,
    resolve_cwd,
    resolve_session_ids,
    run_command,
    socket_option,
)
from agentctl.options import (
    CancelOptions,
    SessionsExport,
    SessionsFork,
    SessionsOptions,
    SessionsRemove,
    SessionsRename,
    SessionsShow,
    StatusOptions,
)
from agentctl.render.listing import format_session_table, format_transcript
from agentctl.render.style import Style, wants_color
from agentctl.render.toolfmt import format_seconds
from agentctl.run import outcome
from agentd.protocol.controls import escape_controls
from agentd.protocol.methods import (
    DaemonStatusResult,
    SessionDeleteParams,
    SessionExportParams,
    SessionForkParams,
    SessionIdParams,
    SessionListParams,
    SessionListResult,
    SessionRenameParams,
)
from agentd.protocol.session_file import SessionSummary

PAGE_LIMIT = 1000
"""The most sessions the daemon returns in one `session/list` page."""

EXPORT_FORMATS = {"md": "markdown", "markdown": "markdown", "html": "html"}


def print_json(value: Any) -> None:
    """One JSON document on stdout (wire names, camelCase)."""
    sys.stdout.buffer.write(msgspec.json.encode(value) + b"\n")
    sys.stdout.buffer.flush()


def command_main(options: SessionsOptions | CancelOptions | StatusOptions) -> int:
    """Entry point of ``sessions``, ``cancel`` and ``status``."""
    match options:
        case CancelOptions():
            return run_command(lambda: _cancel(options))
        case StatusOptions():
            return run_command(lambda: _status(options))
    return run_command(lambda: _sessions(options))


# --- sessions -------------------------------------------------------------------------------


async def _sessions(options: SessionsOptions) -> int:
    async with await open_client(options) as client:
        options = await resolve_session_ids(client, options)
        match options:
            case SessionsShow():
                return await _show(client, options)
            case SessionsExport():
                return await _export(client, options)
            case SessionsFork():
                return await _fork(client, options)
            case SessionsRename():
                return await _rename(client, options)
            case SessionsRemove():
                params = SessionDeleteParams(session_id=options.session_id, force=options.force)
                await client.sessions.delete(params)
                sys.stdout.write(f"deleted {options.session_id}\n")
                return outcome.OK
        return await _list(client, options)


async def _list(client: AgentClient, options: SessionsOptions) -> int:
    cwd = resolve_cwd(options.cwd) if options.cwd else None
    page = await _sessions_page(client, cwd, options.limit or 50)
    if options.json:
        print_json(page)
        return outcome.OK
    table = format_session_table(page.sessions, Style(wants_color(sys.stdout)))
    sys.stdout.write((table or "no sessions") + "\n")
    if page.next_cursor:
        shown = len(page.sessions)
        sys.stdout.write(f"… the newest {shown} shown; for more: --limit {shown * 2}\n")
    return outcome.OK


async def _sessions_page(client: AgentClient, cwd: str | None, limit: int) -> SessionListResult:
    """The newest ``limit`` sessions, fetched in pages of at most :data:`PAGE_LIMIT` (the
    daemon's cap), so any ``--limit`` works; ``next_cursor`` says whether more exist."""
    sessions: list[SessionSummary] = []
    cursor: str | None = None
    while True:
        wanted = min(PAGE_LIMIT, limit - len(sessions))
        page = await client.sessions.list(SessionListParams(cwd=cwd, limit=wanted, cursor=cursor))
        sessions += page.sessions
        cursor = page.next_cursor
        if cursor is None or len(sessions) >= limit:
            return SessionListResult(sessions=sessions, next_cursor=cursor)


async def _show(client: AgentClient, options: SessionsShow) -> int:
    messages = await client.messages(options.session_id)
    if options.json:
        print_json(messages)
        return outcome.OK
    style = Style(wants_color(sys.stdout))
    text = format_transcript(messages, style, verbose=options.verbose)
    sys.stdout.write((text or "(no messages)") + "\n")
    return outcome.OK


async def _export(client: AgentClient, options: SessionsExport) -> int:
    html = EXPORT_FORMATS[options.format] == "html"
    params = SessionExportParams(
        session_id=options.session_id, format="html" if html else "markdown"
    )
    content = (await client.sessions.export(params)).content
    if not options.output:
        if sys.stdout.isatty():  # the transcript's control characters, escaped on a terminal
            content = escape_controls(content)
        sys.stdout.write(content if content.endswith("\n") else content + "\n")
        return outcome.OK
    try:
        Path(options.output).write_text(content, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"-o {options.output}: {exc.strerror or exc}") from None
    sys.stderr.write(f"wrote {options.output}\n")
    return outcome.OK


async def _fork(client: AgentClient, options: SessionsFork) -> int:
    """``sessions fork ID``: a new session holding session ID's conversation up to
    ``--entry`` (default: its last entry); prints ``forked ID → NEW`` (or the new session)."""
    params = SessionForkParams(session_id=options.session_id, entry_id=options.entry)
    info = await client.sessions.fork(params)
    if options.title:
        rename = SessionRenameParams(session_id=info.session_id, title=options.title)
        await client.sessions.rename(rename)
    if options.json:
        print_json(info)
    else:
        sys.stdout.write(
            f"forked {options.session_id} → {info.session_id}\n"
            f'continue it: agentctl send --session {info.session_id} "…"\n'
        )
    return outcome.OK


async def _rename(client: AgentClient, options: SessionsRename) -> int:
    title = " ".join(options.title).strip()
    if not title:
        raise UsageError("the title is empty")
    await client.sessions.rename(SessionRenameParams(session_id=options.session_id, title=title))
    sys.stdout.write(f"renamed {options.session_id}: {escape_controls(title)}\n")
    return outcome.OK


# --- cancel and status ----------------------------------------------------------------------


async def _cancel(options: CancelOptions) -> int:
    async with await connect(socket_option(options)) as client:
        options = await resolve_session_ids(client, options)
        result = await client.sessions.cancel(SessionIdParams(session_id=options.session_id))
    sys.stdout.write("cancelled\n" if result.cancelled else "not running\n")
    for text in result.dropped:
        sys.stdout.write(f"dropped queued message: {escape_controls(text)}\n")
    return outcome.OK


def format_status(status: DaemonStatusResult, socket: str | None) -> str:
    """``agentd 0.1.0 · pid 42 · up 3m05s · 1 connection · 2 sessions loaded · unix``."""
    parts = [
        f"agentd {status.version}",
        f"pid {status.pid}",
        f"up {format_seconds(status.uptime_s)}",
        f"{status.connections} connection{'s' if status.connections != 1 else ''}",
        f"{len(status.sessions)} session{'s' if len(status.sessions) != 1 else ''} loaded",
    ]
    if socket:
        parts.append(socket)
    return " · ".join(parts)


async def _status(options: StatusOptions) -> int:
    path = launch.socket_path(socket_option(options))
    try:
        client = await connect(path)
    except DaemonUnavailable as exc:
        if options.json:
            print_json({"running": False, "socket": path})
        sys.stderr.write(f"not running: {exc}\n")
        return outcome.AGENT_ERROR
    async with client:
        status = await client.status()
    if options.json:
        print_json({"running": True, "socket": path, **msgspec.to_builtins(status)})
    else:
        sys.stdout.write(format_status(status, path) + "\n")
    return outcome.OK
