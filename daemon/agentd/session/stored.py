"""The session service's methods on stored sessions: listing them, reading and exporting
one, moving its branch (``session/branch``, ``session/rewind``), renaming it, adding a note,
unloading and deleting it.

:class:`StoredSessionMethods` is the half of :class:`agentd.session.service.SessionService`
that works on what a session has (its file and tree) rather than on a run; the service
provides the loaded sessions (:meth:`StoredSessionMethods._manager`). Like the service it
imports only protocol types and the message pager at start-up; the store is imported when first
used.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agentd.errors import InvalidParams, SessionBusy
from agentd.protocol.methods import (
    MessagesParams,
    MessagesResult,
    OkResult,
    SessionBranchParams,
    SessionDeleteParams,
    SessionExportParams,
    SessionExportResult,
    SessionIdParams,
    SessionListParams,
    SessionListResult,
    SessionNoteParams,
    SessionRenameParams,
    SessionStateResult,
)
from agentd.protocol.processes import (
    KillProcessParams,
    ProcessesParams,
    ProcessesResult,
    ProcessInfo,
    SessionProcesses,
)
from agentd.protocol.rewind import SessionRewindParams, SessionRewindResult
from agentd.session.history import message_page, with_hook_blocks

if TYPE_CHECKING:
    from agentd.api.subscriber import Subscriber
    from agentd.protocol.session_file import SessionSummary
    from agentd.session.manager import SessionManager
    from agentd.session.runtime import SessionRuntime


class StoredSessionMethods:
    """``session/list``, ``messages``, ``state``, ``export``, ``branch``, ``rewind``,
    ``rename``, ``note``, ``delete`` and ``close`` (see the module docstring)."""

    _sessions: SessionManager | None

    def _manager(self) -> SessionManager:
        """The registry of loaded sessions (the service builds it on first use)."""
        raise NotImplementedError

    async def list(
        self, params: SessionListParams, subscriber: Subscriber | None = None
    ) -> SessionListResult:
        """``session/list``: stored sessions, newest first, with their loaded/running state."""
        from agentd.store import list_sessions

        if not 1 <= params.limit <= 1000:
            raise InvalidParams("`limit` must be between 1 and 1000 - at `$.limit`")
        sessions = self._manager()
        cwd = str(Path(params.cwd).expanduser().resolve()) if params.cwd else None
        root = sessions.shared.session_root
        items, cursor = await asyncio.to_thread(
            list_sessions, root, cwd, params.limit, params.cursor
        )
        return SessionListResult(sessions=[self._with_state(i) for i in items], next_cursor=cursor)

    def _with_state(self, item: SessionSummary) -> SessionSummary:
        runtime = self._loaded(item.session_id)
        if runtime is None:
            return item
        return msgspec.structs.replace(item, loaded=True, running=runtime.running)

    async def messages(
        self, params: MessagesParams, subscriber: Subscriber | None = None
    ) -> MessagesResult:
        """``session/messages``: a page of the conversation on the current branch (secrets
        redacted; see :func:`agentd.session.history.message_page`)."""
        runtime = await self._manager().get(params.session_id)
        page = await message_page(
            runtime.messages(), runtime.file.redact_json, limit=params.limit, before=params.before
        )
        blocks = runtime.hook_blocks()
        return with_hook_blocks(page, blocks) if blocks else page

    async def state(
        self, params: SessionIdParams, subscriber: Subscriber | None = None
    ) -> SessionStateResult:
        """``session/state``: status, model, queues, usage."""
        return (await self._manager().get(params.session_id)).state()

    async def processes(
        self, params: ProcessesParams, subscriber: Subscriber | None = None
    ) -> ProcessesResult:
        """``session/processes``: the background processes of one session (loading it: a
        session not loaded has none), or of every loaded session that has any."""
        if params.session_id is not None:
            runtime = await self._manager().get(params.session_id)
            table = runtime.processes
            infos = table.infos() if table is not None else []
            return ProcessesResult(sessions=[SessionProcesses(runtime.id, infos)])
        loaded = {} if self._sessions is None else self._sessions.loaded
        found = [
            SessionProcesses(session_id, runtime.processes.infos())
            for session_id, runtime in loaded.items()
            if runtime.processes is not None and runtime.processes.processes
        ]
        return ProcessesResult(sessions=found)

    async def kill_process(
        self, params: KillProcessParams, subscriber: Subscriber | None = None
    ) -> ProcessInfo:
        """``session/killProcess``: end one background process; InvalidParams for an id the
        session does not have."""
        runtime = await self._manager().get(params.session_id)
        table = runtime.processes
        process = table.processes.get(params.process_id) if table is not None else None
        if table is None or process is None:
            known = ", ".join(table.processes) if table is not None and table.processes else "none"
            raise InvalidParams(
                f"No background process {params.process_id!r} in session {runtime.id} "
                f"(its processes: {known})"
            )
        await process.kill(runtime.agent.context.settings.bash_kill_grace)
        return process.info()

    async def export(
        self, params: SessionExportParams, subscriber: Subscriber | None = None
    ) -> SessionExportResult:
        """``session/export``: the session as a Markdown or standalone HTML document."""
        from agentd.store.export import export_html, export_markdown

        runtime = await self._manager().get(params.session_id)
        render = export_html if params.format == "html" else export_markdown
        processes = runtime.processes.infos() if runtime.processes is not None else []
        return SessionExportResult(format=params.format, content=render(runtime.file, processes))

    async def branch(
        self, params: SessionBranchParams, subscriber: Subscriber | None = None
    ) -> OkResult:
        """``session/branch``: continue from ``entry_id`` (SessionBusy while running)."""
        await (await self._manager().get(params.session_id)).branch(params.entry_id)
        return OkResult()

    async def rewind(
        self, params: SessionRewindParams, subscriber: Subscriber | None = None
    ) -> SessionRewindResult:
        """``session/rewind``: back to before a user prompt, files restored
        (:mod:`agentd.session.rewind`; SessionBusy while running)."""
        from agentd.session.rewind import rewind_session

        return await rewind_session(await self._manager().get(params.session_id), params)

    async def rename(
        self, params: SessionRenameParams, subscriber: Subscriber | None = None
    ) -> OkResult:
        """``session/rename``: set the title."""
        (await self._manager().get(params.session_id)).rename(params.title)
        return OkResult()

    async def note(
        self, params: SessionNoteParams, subscriber: Subscriber | None = None
    ) -> OkResult:
        """``session/note``: add a user message without a run (SessionBusy while running)."""
        if not params.text.strip():
            raise InvalidParams("`text` is empty - at `$.text`")
        await (await self._manager().get(params.session_id)).add_note(params.text)
        return OkResult()

    async def delete(
        self, params: SessionDeleteParams, subscriber: Subscriber | None = None
    ) -> OkResult:
        """``session/delete``: unload, then remove the file, its images, its kept file
        contents (rewind), the session's spill files and its commands' temp dir."""
        from agentd.session.shared import spill_root
        from agentd.store.blobs import remove as remove_images
        from agentd.store.contents import remove as remove_contents
        from agentd.tools.process.spill import remove_session, tmp_root

        sessions = self._manager()
        runtime = sessions.loaded.get(params.session_id)
        if runtime is not None and runtime.running and not params.force:
            raise SessionBusy(f"session {runtime.id} is running; cancel it or pass force: true")
        path = runtime.file.path if runtime else sessions.find_path(params.session_id)
        await sessions.unload(params.session_id)
        path.unlink(missing_ok=True)
        await asyncio.to_thread(remove_images, path)
        await asyncio.to_thread(remove_contents, path)
        await asyncio.to_thread(remove_session, spill_root(), params.session_id)
        await asyncio.to_thread(remove_session, tmp_root(), params.session_id)
        return OkResult()

    async def close_session(
        self, params: SessionIdParams, subscriber: Subscriber | None = None
    ) -> OkResult:
        """``session/close``: unload (the file stays); SessionNotFound for unknown ids."""
        sessions = self._manager()
        if not await sessions.unload(params.session_id):
            sessions.find_path(params.session_id)
        return OkResult()

    def _loaded(self, session_id: str) -> SessionRuntime | None:
        return None if self._sessions is None else self._sessions.loaded.get(session_id)
