"""Handlers of the session-store methods.

``session/list``, ``session/load``, ``session/fork``, ``session/branch``, ``session/rename``,
``session/delete``, ``session/close``, ``session/export``, ``session/subscribe``,
``session/unsubscribe``, ``session/compact``, ``session/note``.

History replay (``session/load`` with ``replay: true``) sends the messages of the current branch
as ``message_end`` events with ``seq: 0`` to the loading connection only, before the response;
live events keep their strictly increasing ``seq``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agentd.errors import InvalidParams, SessionBusy
from agentd.protocol.events import MessageEnd, SessionEvent
from agentd.protocol.methods import (
    CompactParams,
    CompactResult,
    OkResult,
    SessionBranchParams,
    SessionDeleteParams,
    SessionExportParams,
    SessionExportResult,
    SessionForkParams,
    SessionIdParams,
    SessionInfo,
    SessionListParams,
    SessionListResult,
    SessionLoadParams,
    SessionLoadResult,
    SessionNoteParams,
    SessionRenameParams,
    SubscribeParams,
    SubscribeResult,
)
from agentd.server.sessions import client_env

if TYPE_CHECKING:
    from agentd.protocol.session_file import SessionSummary
    from agentd.rpc import Connection, Handler, Router
    from agentd.server.runtime import SessionRuntime
    from agentd.server.sessions import SessionManager


def register(router: Router, sessions: SessionManager) -> None:
    """Register this module's handlers, bound to ``sessions``."""

    async def list_(conn: Connection, params: SessionListParams) -> SessionListResult:
        from agentd.store import list_sessions

        if not 1 <= params.limit <= 1000:
            raise InvalidParams("`limit` must be between 1 and 1000 - at `$.limit`")
        cwd = str(Path(params.cwd).expanduser().resolve()) if params.cwd else None
        items, cursor = await asyncio.to_thread(
            list_sessions, sessions.services.session_root, cwd, params.limit, params.cursor
        )
        return SessionListResult(sessions=[_with_state(item) for item in items], next_cursor=cursor)

    def _with_state(item: SessionSummary) -> SessionSummary:
        runtime = sessions.loaded.get(item.session_id)
        if runtime is None:
            return item
        return msgspec.structs.replace(item, loaded=True, running=runtime.running)

    async def load(conn: Connection, params: SessionLoadParams) -> SessionLoadResult:
        if (params.session_id is None) == (params.path is None):
            raise InvalidParams("give exactly one of `sessionId` and `path`")
        env = client_env(conn, params.provider_env)
        runtime = await sessions.load(
            session_id=params.session_id, path=params.path, client_env=env
        )
        if params.replay:
            _replay(runtime, conn)
        sessions.watch(runtime, conn)
        return SessionLoadResult(
            session=runtime.info(),
            last_seq=runtime.bus.seq,
            message_count=len(runtime.agent.messages),
            warnings=[w.message for w in runtime.file.warnings],
        )

    async def fork(conn: Connection, params: SessionForkParams) -> SessionInfo:
        source = await sessions.get(params.session_id)
        forked = await asyncio.to_thread(
            source.file.fork,
            sessions.services.session_root,
            params.entry_id,
            session_id=params.new_session_id,
        )
        forked.close()
        runtime = await sessions.load(path=str(forked.path))
        sessions.watch(runtime, conn)
        return runtime.info()

    async def branch(conn: Connection, params: SessionBranchParams) -> OkResult:
        runtime = _idle(await sessions.get(params.session_id), "branch")
        runtime.file.branch(params.entry_id)
        runtime.agent.messages[:] = runtime.file.messages()
        return OkResult()

    async def rename(conn: Connection, params: SessionRenameParams) -> OkResult:
        from agentd.protocol.session_file import SessionInfoEntry

        runtime = await sessions.get(params.session_id)
        runtime.file.append(SessionInfoEntry(title=params.title))
        runtime.settings.title = params.title
        return OkResult()

    async def note(conn: Connection, params: SessionNoteParams) -> OkResult:
        if not params.text.strip():
            raise InvalidParams("`text` is empty - at `$.text`")
        (await sessions.get(params.session_id)).add_note(params.text)
        return OkResult()

    async def delete(conn: Connection, params: SessionDeleteParams) -> OkResult:
        runtime = sessions.loaded.get(params.session_id)
        if runtime is not None and runtime.running and not params.force:
            raise SessionBusy(f"session {runtime.id} is running; cancel it or pass force: true")
        path = runtime.file.path if runtime else sessions.find_path(params.session_id)
        await sessions.unload(params.session_id)
        path.unlink(missing_ok=True)
        from agentd.server.factory import spill_root
        from agentd.tools.spill import remove_session

        await asyncio.to_thread(remove_session, spill_root(), params.session_id)
        return OkResult()

    async def close(conn: Connection, params: SessionIdParams) -> OkResult:
        if not await sessions.unload(params.session_id):
            sessions.find_path(params.session_id)
        return OkResult()

    async def export(conn: Connection, params: SessionExportParams) -> SessionExportResult:
        from agentd.store import export_html, export_markdown

        runtime = await sessions.get(params.session_id)
        render = export_html if params.format == "html" else export_markdown
        return SessionExportResult(format=params.format, content=render(runtime.file))

    async def subscribe(conn: Connection, params: SubscribeParams) -> SubscribeResult:
        runtime = await sessions.get(params.session_id)
        replayed, complete = sessions.watch(runtime, conn, params.since_seq)
        return SubscribeResult(replayed=replayed, complete=complete, last_seq=runtime.bus.seq)

    async def unsubscribe(conn: Connection, params: SessionIdParams) -> OkResult:
        runtime = sessions.loaded.get(params.session_id)
        return OkResult(ok=runtime is not None and runtime.bus.unsubscribe(conn))

    async def compact(conn: Connection, params: CompactParams) -> CompactResult:
        runtime = _idle(await sessions.get(params.session_id), "compact")
        if runtime.compactor is None:
            return CompactResult(compacted=False)
        return await runtime.compactor.compact("manual", params.instructions)

    handlers: dict[str, Handler] = {
        "session/list": list_,
        "session/load": load,
        "session/fork": fork,
        "session/branch": branch,
        "session/rename": rename,
        "session/note": note,
        "session/delete": delete,
        "session/close": close,
        "session/export": export,
        "session/subscribe": subscribe,
        "session/unsubscribe": unsubscribe,
        "session/compact": compact,
    }
    for name, handler in handlers.items():
        router.add(name, handler)


def _idle(runtime: SessionRuntime, action: str) -> SessionRuntime:
    if runtime.running:
        raise SessionBusy(f"session {runtime.id} is running; cannot {action} until it ends")
    return runtime


def _replay(runtime: SessionRuntime, conn: Connection) -> None:
    """Send the branch's messages to ``conn`` as seq-0 ``message_end`` events."""
    encode = msgspec.json.encode
    for message in runtime.agent.messages:
        frame = encode(
            SessionEvent(session_id=runtime.id, seq=0, event=MessageEnd(message=message))
        )
        conn.notify("session/event", msgspec.Raw(frame))
