"""The session service: the one typed API over the daemon's sessions, for every front-end.

The JSON-RPC handlers (:mod:`agentd.jsonrpc.handlers`) are thin adapters over
:class:`SessionService`; in-process front-ends (ACP, web, LSP) call it directly. Parameters and
results are the wire types of :mod:`agentd.protocol.methods`, so a front-end translates its own
protocol to and from them, and errors are :class:`~agentd.errors.RpcError` subclasses with the
same codes and texts a JSON-RPC client sees.

A front-end receives a session's events by subscribing a
:class:`~agentd.session.subscriber.Subscriber` (:class:`~agentd.session.subscriber.QueueSubscriber`
for the simple case) and acts as an approval client by being a subscriber that
``answers_permissions`` (or by calling :meth:`SessionService.answer_permission`).

Start-up cost: this module imports only the protocol types. The session machinery (agent,
tools, store, providers) is imported when the first session is used (:meth:`_manager`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from agentd.errors import InvalidParams, SessionBusy
from agentd.protocol.events import MessageEnd, PermissionOption
from agentd.protocol.methods import (
    CancelResult,
    CompactParams,
    CompactResult,
    MessagesResult,
    ModelsListResult,
    PermissionMode,
    PromptParams,
    PromptResult,
    SessionDeleteParams,
    SessionForkParams,
    SessionInfo,
    SessionListParams,
    SessionListResult,
    SessionLoadParams,
    SessionLoadResult,
    SessionNewParams,
    SessionStateResult,
    SubscribeResult,
)
from agentd.session.idle import DEFAULT_IDLE_SECONDS, DEFAULT_MAX_LOADED

if TYPE_CHECKING:
    from agentd.agent.loop import RunResult
    from agentd.protocol.session_file import SessionSummary
    from agentd.session.manager import SessionManager
    from agentd.session.runtime import SessionRuntime
    from agentd.session.subscriber import Subscriber

ExportFormat = Literal["markdown", "html"]


class PromptRun:
    """A run started by :meth:`SessionService.start_prompt`."""

    def __init__(self, runtime: SessionRuntime, task: asyncio.Task[RunResult]) -> None:
        self.session_id = runtime.id
        self._runtime = runtime
        self._task = task

    async def result(self) -> PromptResult:
        """Wait for the run to end. Cancelling this wait does not cancel the run."""
        from agentd.session.settings import prompt_result

        return prompt_result(await asyncio.shield(self._task))

    def cancel(self) -> CancelResult:
        """Cancel the run (and drop its queued messages)."""
        return self._runtime.cancel()

    async def settled(self) -> None:
        """Wait until the run has ended (however it ends)."""
        await asyncio.gather(self._task, return_exceptions=True)


class SessionService:
    """Every session operation of the daemon (see the module docstring)."""

    def __init__(
        self,
        session_dir: Path | None = None,
        config_file: Path | None = None,
        *,
        idle_unload: float = DEFAULT_IDLE_SECONDS,
        max_loaded_sessions: int = DEFAULT_MAX_LOADED,
    ) -> None:
        self.session_dir = session_dir
        self.config_file = config_file
        self.idle_unload = idle_unload
        self.max_loaded_sessions = max_loaded_sessions
        self._sessions: SessionManager | None = None
        self._housekeeping = False

    def start(self) -> None:
        """Begin unloading idle sessions (see :mod:`agentd.session.idle`), from the first session
        on. A service never started keeps every session loaded until it is closed."""
        self._housekeeping = True
        if self._sessions is not None:
            self._sessions.idle.start()

    def _manager(self) -> SessionManager:
        """The registry of loaded sessions, built (and its modules imported) on first use."""
        if self._sessions is None:
            from agentd.session.manager import SessionManager
            from agentd.session.shared import Services

            self._sessions = SessionManager(
                Services(self.session_dir, self.config_file),
                idle_seconds=self.idle_unload,
                max_loaded=self.max_loaded_sessions,
            )
            if self._housekeeping:
                self._sessions.idle.start()
        return self._sessions

    def loaded_ids(self) -> list[str]:
        """Ids of the loaded sessions."""
        return [] if self._sessions is None else self._sessions.loaded_ids()

    async def close(self) -> None:
        """Cancel running runs and flush every session file (daemon shutdown)."""
        if self._sessions is not None:
            await self._sessions.close()

    # --- opening sessions --------------------------------------------------------------------

    async def create(
        self, params: SessionNewParams, subscriber: Subscriber | None = None
    ) -> SessionInfo:
        """``session/new``: open a new session; ``subscriber`` (if given) watches it."""
        sessions = self._manager()
        runtime = await sessions.create(params)
        if subscriber is not None:
            sessions.watch(runtime, subscriber)
        return runtime.info()

    async def load(
        self, params: SessionLoadParams, subscriber: Subscriber | None = None
    ) -> SessionLoadResult:
        """``session/load``: load by id or path; ``replay`` sends the branch's messages to
        ``subscriber`` as seq-0 ``message_end`` events before it starts watching."""
        if (params.session_id is None) == (params.path is None):
            raise InvalidParams("give exactly one of `sessionId` and `path`")
        sessions = self._manager()
        runtime = await sessions.load(
            session_id=params.session_id, path=params.path, client_env=params.provider_env
        )
        if subscriber is not None:
            if params.replay:
                for message in runtime.agent.messages:
                    runtime.bus.send_one(subscriber, MessageEnd(message=message))
            sessions.watch(runtime, subscriber)
        return SessionLoadResult(
            session=runtime.info(),
            last_seq=runtime.bus.seq,
            message_count=len(runtime.agent.messages),
            warnings=[w.message for w in runtime.file.warnings],
        )

    async def fork(
        self, params: SessionForkParams, subscriber: Subscriber | None = None
    ) -> SessionInfo:
        """``session/fork``: a new session with the branch up to ``entry_id``; loaded."""
        sessions = self._manager()
        source = await sessions.get(params.session_id)
        root = sessions.services.session_root
        path = await asyncio.to_thread(source.fork, root, params.entry_id, params.new_session_id)
        runtime = await sessions.load(path=str(path))
        if subscriber is not None:
            sessions.watch(runtime, subscriber)
        return runtime.info()

    # --- runs --------------------------------------------------------------------------------

    async def start_prompt(
        self, params: PromptParams, subscriber: Subscriber | None = None
    ) -> PromptRun:
        """Start a run on a prompt (``subscriber``, if given, watches the session first)."""
        if not params.text.strip() and not params.images:
            raise InvalidParams("`text` is empty - at `$.text`")
        sessions = self._manager()
        runtime = await sessions.get(params.session_id)
        if subscriber is not None and subscriber.key not in runtime.bus.subscribers:
            sessions.watch(runtime, subscriber)
        await runtime.ensure_model()
        task = runtime.start_run(
            params.text,
            params.images,
            params.max_turns,
            max_cost=params.max_cost,
            max_tokens=params.max_tokens,
        )
        return PromptRun(runtime, task)

    async def prompt(
        self, params: PromptParams, subscriber: Subscriber | None = None
    ) -> PromptResult:
        """``session/prompt``: run and wait for the end; cancelling the wait cancels the run."""
        run = await self.start_prompt(params, subscriber)
        try:
            return await run.result()
        except asyncio.CancelledError:
            run.cancel()
            await run.settled()
            raise

    async def steer(self, session_id: str, text: str) -> None:
        """``session/steer``: deliver ``text`` after the current tool calls (SessionIdle if no
        run is in progress)."""
        (await self._manager().get(session_id)).enqueue(text, steer=True)

    async def follow_up(self, session_id: str, text: str) -> None:
        """``session/followUp``: deliver ``text`` when the run would otherwise end."""
        (await self._manager().get(session_id)).enqueue(text, steer=False)

    async def cancel(self, session_id: str) -> CancelResult:
        """``session/cancel``: cancel the run and wait until it has ended."""
        sessions = self._manager()
        runtime = sessions.loaded.get(session_id)
        if runtime is None:
            sessions.find_path(session_id)  # SessionNotFound for unknown ids
            return CancelResult(cancelled=False)
        result = runtime.cancel()
        await runtime.settled()
        return result

    def answer_permission(
        self, session_id: str, tool_call_id: str, outcome: PermissionOption
    ) -> bool:
        """Answer a pending permission request of a loaded session (first answer wins);
        False when none is pending for ``tool_call_id``."""
        runtime = self._loaded(session_id)
        return runtime is not None and runtime.approver.answer(tool_call_id, outcome)

    async def compact(self, params: CompactParams) -> CompactResult:
        """``session/compact``: summarise older context now (SessionBusy while running)."""
        runtime = await self._manager().get(params.session_id)
        if runtime.running:
            raise SessionBusy(f"session {runtime.id} is running; cannot compact until it ends")
        await runtime.ensure_model()
        return await runtime.compact("manual", params.instructions)

    async def set_model(
        self,
        session_id: str,
        provider: str | None,
        model: str,
        provider_env: dict[str, str] | None = None,
    ) -> SessionInfo:
        """``session/setModel``: use another provider/model from the next model call on
        (``provider_env``: the client's provider variables, kept in memory for the session)."""
        from agentd.session.factory import switch_model

        sessions = self._manager()
        runtime = await sessions.get(session_id)
        await switch_model(sessions.services, runtime, provider, model, provider_env)
        return runtime.info()

    async def set_permission_mode(self, session_id: str, mode: PermissionMode) -> SessionInfo:
        """``session/setPermissionMode``: applies to the next tool calls; recorded."""
        runtime = await self._manager().get(session_id)
        runtime.set_permission_mode(mode)
        return runtime.info()

    def models(
        self, cwd: str | None = None, provider_env: dict[str, str] | None = None
    ) -> ModelsListResult:
        """``models/list`` for the configuration of ``cwd`` (default: the daemon's own)."""
        return self._manager().services.models(cwd, provider_env)

    # --- watching ----------------------------------------------------------------------------

    async def subscribe(
        self, session_id: str, subscriber: Subscriber, since_seq: int | None = None
    ) -> SubscribeResult:
        """``session/subscribe``: watch a session, first replaying buffered events after
        ``since_seq`` (``complete`` False when the buffer no longer reaches back that far)."""
        sessions = self._manager()
        runtime = await sessions.get(session_id)
        replayed, complete = sessions.watch(runtime, subscriber, since_seq)
        return SubscribeResult(replayed=replayed, complete=complete, last_seq=runtime.bus.seq)

    def unsubscribe(self, session_id: str, subscriber: Subscriber) -> bool:
        """``session/unsubscribe``: stop watching; whether ``subscriber`` was watching."""
        runtime = self._loaded(session_id)
        return runtime is not None and runtime.bus.unsubscribe(subscriber)

    def forget(self, subscriber: Subscriber) -> None:
        """Unsubscribe ``subscriber`` from every session (call it when it goes away)."""
        if self._sessions is not None:
            self._sessions.forget(subscriber)

    # --- reading and managing the store ------------------------------------------------------

    async def list(self, params: SessionListParams) -> SessionListResult:
        """``session/list``: stored sessions, newest first, with their loaded/running state."""
        from agentd.store import list_sessions

        if not 1 <= params.limit <= 1000:
            raise InvalidParams("`limit` must be between 1 and 1000 - at `$.limit`")
        sessions = self._manager()
        cwd = str(Path(params.cwd).expanduser().resolve()) if params.cwd else None
        root = sessions.services.session_root
        items, cursor = await asyncio.to_thread(
            list_sessions, root, cwd, params.limit, params.cursor
        )
        return SessionListResult(sessions=[self._with_state(i) for i in items], next_cursor=cursor)

    def _with_state(self, item: SessionSummary) -> SessionSummary:
        runtime = self._loaded(item.session_id)
        if runtime is None:
            return item
        return msgspec.structs.replace(item, loaded=True, running=runtime.running)

    async def messages(self, session_id: str) -> MessagesResult:
        """``session/messages``: the conversation on the current branch (secrets redacted)."""
        runtime = await self._manager().get(session_id)
        result = MessagesResult(messages=runtime.messages())
        redacted = runtime.file.redact_json(msgspec.json.encode(result))
        return msgspec.json.decode(redacted, type=MessagesResult)

    async def state(self, session_id: str) -> SessionStateResult:
        """``session/state``: status, model, queues, usage."""
        return (await self._manager().get(session_id)).state()

    async def export(self, session_id: str, format: ExportFormat) -> str:
        """``session/export``: the session as a Markdown or standalone HTML document."""
        from agentd.store.export import export_html, export_markdown

        runtime = await self._manager().get(session_id)
        render = export_html if format == "html" else export_markdown
        return render(runtime.file)

    async def branch(self, session_id: str, entry_id: str | None) -> None:
        """``session/branch``: continue from ``entry_id`` (SessionBusy while running)."""
        (await self._manager().get(session_id)).branch(entry_id)

    async def rename(self, session_id: str, title: str) -> None:
        """``session/rename``: set the title."""
        (await self._manager().get(session_id)).rename(title)

    async def note(self, session_id: str, text: str) -> None:
        """``session/note``: add a user message without a run (SessionBusy while running)."""
        if not text.strip():
            raise InvalidParams("`text` is empty - at `$.text`")
        (await self._manager().get(session_id)).add_note(text)

    async def delete(self, params: SessionDeleteParams) -> None:
        """``session/delete``: unload, then remove the file and the session's spill files."""
        from agentd.session.shared import spill_root
        from agentd.tools.process.spill import remove_session

        sessions = self._manager()
        runtime = sessions.loaded.get(params.session_id)
        if runtime is not None and runtime.running and not params.force:
            raise SessionBusy(f"session {runtime.id} is running; cancel it or pass force: true")
        path = runtime.file.path if runtime else sessions.find_path(params.session_id)
        await sessions.unload(params.session_id)
        path.unlink(missing_ok=True)
        await asyncio.to_thread(remove_session, spill_root(), params.session_id)

    async def close_session(self, session_id: str) -> None:
        """``session/close``: unload (the file stays); SessionNotFound for unknown ids."""
        sessions = self._manager()
        if not await sessions.unload(session_id):
            sessions.find_path(session_id)

    def _loaded(self, session_id: str) -> SessionRuntime | None:
        return None if self._sessions is None else self._sessions.loaded.get(session_id)
