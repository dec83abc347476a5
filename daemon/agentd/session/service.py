"""The session service: the one typed API over the daemon's sessions, for every front-end.

It implements :class:`agentd.api.SessionApi`: one method per ``call`` of the method table
(:data:`agentd.protocol.table.METHODS`), ``async def name(self, params, subscriber=None) ->
Result`` with the wire types of :mod:`agentd.protocol.methods`; errors are
:class:`~agentd.errors.RpcError` subclasses with the codes and texts a JSON-RPC client sees.
The JSON-RPC handlers and the web API are loops over the table; in-process front-ends (ACP)
call it directly.

A front-end receives a session's events by subscribing a
:class:`~agentd.api.subscriber.Subscriber` (:class:`~agentd.api.subscriber.QueueSubscriber`
for the simple case) and acts as an approval client by being a subscriber that
``answers_permissions`` (or by calling :meth:`SessionService.answer_permission`).

Start-up cost: this module imports only the protocol types. The session machinery (agent,
tools, store, providers) is imported when the first session is used (:meth:`_manager`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.errors import InvalidParams, InvalidRequest, SessionBusy
from agentd.protocol.commands import SessionCommandsParams, SessionCommandsResult
from agentd.protocol.lifecycle import LanguageServerInfo
from agentd.protocol.mcp import (
    McpListParams,
    McpListResult,
    McpLoginFinishParams,
    McpLoginParams,
    McpLoginResult,
    McpLogoutParams,
    McpLogoutResult,
    McpServerInfo,
)
from agentd.protocol.methods import (
    CancelResult,
    CompactParams,
    CompactResult,
    ModelsListParams,
    ModelsListResult,
    OkResult,
    PermissionAnswerParams,
    PromptParams,
    PromptResult,
    SessionForkParams,
    SessionIdParams,
    SessionInfo,
    SessionLoadParams,
    SessionLoadResult,
    SessionNewParams,
    SessionTextParams,
    SetModelParams,
    SetPermissionModeParams,
    SubscribeParams,
    SubscribeResult,
)
from agentd.protocol.questions import QuestionAnswerParams
from agentd.protocol.skills import (
    SessionSkillsParams,
    SessionSkillsResult,
    SkillCheckParams,
    SkillCheckResult,
)
from agentd.session.idle import DEFAULT_IDLE_SECONDS, DEFAULT_MAX_LOADED
from agentd.session.prompt_run import PromptRun
from agentd.session.replay import replay
from agentd.session.stored import StoredSessionMethods

if TYPE_CHECKING:
    from agentd.api import SessionApi
    from agentd.api.subscriber import Subscriber
    from agentd.session.manager import SessionManager
    from agentd.session.runtime import SessionRuntime
    from agentd.telemetry import Telemetry


class SessionService(StoredSessionMethods):
    """Every session operation of the daemon (see the module docstring); those on stored
    sessions (list, read, export, branch, rewind, rename, note, delete, close) come from
    :class:`~agentd.session.stored.StoredSessionMethods`."""

    def __init__(
        self,
        session_dir: Path | None = None,
        config_file: Path | None = None,
        *,
        idle_unload: float = DEFAULT_IDLE_SECONDS,
        max_loaded_sessions: int = DEFAULT_MAX_LOADED,
        provider: str | None = None,
        model: str | None = None,
    ) -> None:
        self.session_dir = session_dir
        self.default_provider = provider
        self.default_model = model
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
            from agentd.session.shared import ModelDefaults, SharedResources

            given = self.default_provider or self.default_model
            defaults = ModelDefaults(self.default_provider, self.default_model) if given else None
            self._sessions = SessionManager(
                SharedResources(self.session_dir, self.config_file, defaults),
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
        await _read_commands(runtime)
        if subscriber is not None:
            sessions.watch(runtime, subscriber)
        return runtime.info()

    async def load(
        self, params: SessionLoadParams, subscriber: Subscriber | None = None
    ) -> SessionLoadResult:
        """``session/load``: load by id or path; ``replay`` sends the branch's messages to
        ``subscriber`` as seq-0 ``message_end`` events (each hook that blocked something as a
        ``hook_result`` after its message, the questions a tool call asked as a
        ``question_request`` and ``question_resolved`` before its result), the plan, and the
        background processes (a ``process_start`` for each running one, a ``process_exit``
        for each ended one) before it starts watching: streamed in chunks paced by the
        subscriber (:mod:`agentd.session.replay`), what the session does meanwhile following
        it."""
        if (params.session_id is None) == (params.path is None):
            raise InvalidParams("give exactly one of `sessionId` and `path`")
        sessions = self._manager()
        runtime = await sessions.load(
            session_id=params.session_id,
            path=params.path,
            client_env=params.provider_env,
            mcp_servers=params.mcp_servers,
        )
        await _read_commands(runtime)
        if subscriber is not None:
            watching = subscriber.key in runtime.bus.subscribers  # gets live events already
            since = await replay(runtime, subscriber) if params.replay else None
            if sessions.loaded.get(runtime.id) is not runtime:  # unloaded during the replay
                runtime, watching = await sessions.get(runtime.id), True
            sessions.watch(runtime, subscriber, None if watching else since)
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
        root = sessions.shared.session_root
        path = await asyncio.to_thread(source.fork, root, params.entry_id, params.new_session_id)
        runtime = await sessions.load(path=str(path))
        if subscriber is not None:
            sessions.watch(runtime, subscriber)
        return runtime.info()

    # --- runs --------------------------------------------------------------------------------

    async def start_prompt(
        self, params: PromptParams, subscriber: Subscriber | None = None
    ) -> PromptRun:
        """Start a run on a prompt (``subscriber``, if given, watches the session first).

        The front-ends' ``session/prompt`` special case: the caller decides what ends the run
        (the JSON-RPC front-end cancels it on ``$/cancelRequest``, the web API never).

        A ``/NAME arguments`` text runs the custom command NAME (its expansion, on its model;
        the user message keeps the typed command): see :mod:`agentd.session.commands`."""
        from agentd.agent.run import RunRequest
        from agentd.session.commands import prepare_prompt

        if not params.text.strip() and not params.images:
            raise InvalidParams("`text` is empty - at `$.text`")
        sessions = self._manager()
        runtime = await sessions.get(params.session_id)
        if subscriber is not None and subscriber.key not in runtime.bus.subscribers:
            sessions.watch(runtime, subscriber)
        await runtime.ensure_model()
        prepared = await prepare_prompt(sessions.shared, runtime, params.text)
        request = RunRequest(
            text=prepared.text,
            images=list(params.images),
            max_turns=params.max_turns,
            max_cost=params.max_cost,
            max_tokens=params.max_tokens,
            command=prepared.command,
            model=prepared.model,
        )
        return PromptRun(runtime, runtime.start_run(request, params.traceparent))

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

    async def steer(
        self, params: SessionTextParams, subscriber: Subscriber | None = None
    ) -> OkResult:
        """``session/steer``: deliver the text after the current tool calls (SessionIdle if no
        run is in progress)."""
        (await self._manager().get(params.session_id)).enqueue(params.text, steer=True)
        return OkResult()

    async def follow_up(
        self, params: SessionTextParams, subscriber: Subscriber | None = None
    ) -> OkResult:
        """``session/followUp``: deliver the text when the run would otherwise end."""
        (await self._manager().get(params.session_id)).enqueue(params.text, steer=False)
        return OkResult()

    async def cancel(
        self, params: SessionIdParams, subscriber: Subscriber | None = None
    ) -> CancelResult:
        """``session/cancel``: cancel the run and wait until it has ended."""
        sessions = self._manager()
        runtime = sessions.loaded.get(params.session_id)
        if runtime is None:
            sessions.find_path(params.session_id)  # SessionNotFound for unknown ids
            return CancelResult(cancelled=False)
        result = runtime.cancel()
        await runtime.settled()
        return result

    async def answer_permission(
        self, params: PermissionAnswerParams, subscriber: Subscriber | None = None
    ) -> OkResult:
        """``permission/answer``: answer a pending permission request of a loaded session
        (first answer wins); ``ok`` False when none is pending for the tool call."""
        runtime = self._loaded(params.session_id)
        answered = runtime is not None and runtime.approver.answer(
            params.tool_call_id, params.outcome
        )
        return OkResult(ok=answered)

    async def answer_question(
        self, params: QuestionAnswerParams, subscriber: Subscriber | None = None
    ) -> OkResult:
        """``question/answer``: answer a pending question of a loaded session (first answer
        wins); ``ok`` False when none is pending under the id or the answers do not fit."""
        runtime = self._loaded(params.session_id)
        questions = None if runtime is None else runtime.questions
        answered = questions is not None and questions.answer(params.question_id, params.answers)
        return OkResult(ok=answered)

    async def compact(
        self, params: CompactParams, subscriber: Subscriber | None = None
    ) -> CompactResult:
        """``session/compact``: summarise older context now (SessionBusy while running)."""
        runtime = await self._manager().get(params.session_id)
        if runtime.running:
            raise SessionBusy(f"session {runtime.id} is running; cannot compact until it ends")
        await runtime.ensure_model()
        return await runtime.compact("manual", params.instructions)

    async def set_model(
        self, params: SetModelParams, subscriber: Subscriber | None = None
    ) -> SessionInfo:
        """``session/setModel``: use another provider/model from the next model call on
        (``provider_env``: the client's provider variables, kept in memory for the session)."""
        from agentd.session.factory import switch_model

        sessions = self._manager()
        runtime = await sessions.get(params.session_id)
        await switch_model(
            sessions.shared, runtime, params.provider, params.model, params.provider_env
        )
        return runtime.info()

    async def commands(
        self, params: SessionCommandsParams, subscriber: Subscriber | None = None
    ) -> SessionCommandsResult:
        """``session/commands``: see :func:`agentd.session.commands.list_commands`."""
        from agentd.session.commands import list_commands

        return await list_commands(self._manager(), params)

    async def skills(
        self, params: SessionSkillsParams, subscriber: Subscriber | None = None
    ) -> SessionSkillsResult:
        """``session/skills``: see :func:`agentd.session.skill_methods.list_skills`."""
        from agentd.session.skill_methods import list_skills

        return await list_skills(self._manager(), params)

    async def check_skill(
        self, params: SkillCheckParams, subscriber: Subscriber | None = None
    ) -> SkillCheckResult:
        """``skills/check``: see :func:`agentd.session.skill_methods.check_skill_folder`."""
        from agentd.session.skill_methods import check_skill_folder

        return await check_skill_folder(params)

    async def set_permission_mode(
        self, params: SetPermissionModeParams, subscriber: Subscriber | None = None
    ) -> SessionInfo:
        """``session/setPermissionMode``: applies to the next tool calls; recorded."""
        runtime = await self._manager().get(params.session_id)
        await runtime.set_permission_mode(params.mode)
        return runtime.info()

    async def models(
        self, params: ModelsListParams, subscriber: Subscriber | None = None
    ) -> ModelsListResult:
        """``models/list`` for the configuration of ``cwd`` (default: the daemon's own)."""
        return self._manager().shared.models(params.cwd, params.provider_env)

    async def mcp_list(
        self, params: McpListParams, subscriber: Subscriber | None = None
    ) -> McpListResult:
        """``mcp/list``: the MCP servers of ``cwd`` (default: the daemon's own) and the
        running ones (each configured one checked with ``check``)."""
        return await self._manager().shared.mcp_list(params.cwd, params.check)

    async def mcp_login(
        self, params: McpLoginParams, subscriber: Subscriber | None = None
    ) -> McpLoginResult:
        """``mcp/login``: see :meth:`agentd.session.shared.SharedResources.mcp_login`."""
        return await self._manager().shared.mcp_login(params)

    async def mcp_login_finish(
        self, params: McpLoginFinishParams, subscriber: Subscriber | None = None
    ) -> McpLoginResult:
        """``mcp/loginFinish``: the end of a login."""
        return await self._manager().shared.mcp_login_finish(params.login_id)

    async def mcp_logout(
        self, params: McpLogoutParams, subscriber: Subscriber | None = None
    ) -> McpLogoutResult:
        """``mcp/logout``: a server's stored OAuth credentials forgotten."""
        return self._manager().shared.mcp_logout(params)

    def mcp_running(self) -> list[McpServerInfo]:
        """The MCP servers the daemon started (none imported or built when no session
        ever had one)."""
        return self._sessions.shared.mcp_running() if self._sessions is not None else []

    def telemetry(self) -> Telemetry | None:
        """The daemon's counters and telemetry export (None before the first session use:
        nothing counted yet)."""
        return self._sessions.shared.telemetry if self._sessions is not None else None

    def queued_messages(self) -> int:
        """Steering and follow-up texts waiting in the loaded sessions' runs."""
        if self._sessions is None:
            return 0
        queues = [runtime.agent.queues for runtime in self._sessions.loaded.values()]
        return sum(len(q.steering) + len(q.follow_up) for q in queues)

    def language_servers_running(self) -> list[LanguageServerInfo]:
        """The language servers the daemon started (nothing imported when no session used
        one)."""
        return self._sessions.shared.lsp_running() if self._sessions is not None else []

    # --- watching ----------------------------------------------------------------------------

    async def subscribe(
        self, params: SubscribeParams, subscriber: Subscriber | None = None
    ) -> SubscribeResult:
        """``session/subscribe``: watch a session, first replaying buffered events after
        ``since_seq`` (``complete`` False when the buffer no longer reaches back that far)."""
        watcher = _required(subscriber, "session/subscribe")
        sessions = self._manager()
        runtime = await sessions.get(params.session_id)
        replayed, complete = sessions.watch(runtime, watcher, params.since_seq)
        return SubscribeResult(replayed=replayed, complete=complete, last_seq=runtime.bus.seq)

    async def unsubscribe(
        self, params: SessionIdParams, subscriber: Subscriber | None = None
    ) -> OkResult:
        """``session/unsubscribe``: stop watching; ``ok``: whether ``subscriber`` was watching."""
        watcher = _required(subscriber, "session/unsubscribe")
        runtime = self._loaded(params.session_id)
        if runtime is None:  # unloaded while subscribed: its subscribers wait aside
            parked = self._sessions is not None and self._sessions.unpark(
                params.session_id, watcher
            )
            return OkResult(ok=parked)
        return OkResult(ok=runtime.bus.unsubscribe(watcher))

    def forget(self, subscriber: Subscriber) -> None:
        """Unsubscribe ``subscriber`` from every session (call it when it goes away)."""
        if self._sessions is not None:
            self._sessions.forget(subscriber)


async def _read_commands(runtime: SessionRuntime) -> None:
    """Read a session's command files as it opens, so problems with them are among its load
    warnings."""
    from agentd.session.commands import scan_commands

    await scan_commands(runtime, loading=True)


def _required(subscriber: Subscriber | None, method: str) -> Subscriber:
    """The subscriber a watching method needs; InvalidRequest without one."""
    if subscriber is None:
        raise InvalidRequest(f"{method} needs a subscriber (the caller that watches)")
    return subscriber


if TYPE_CHECKING:

    def _satisfies_the_api(service: SessionService) -> SessionApi:
        return service  # mypy checks here that the service is a SessionApi
