"""The ACP methods an editor calls, mapped onto agentd's session API.

Every handler translates its ACP params into calls of the :class:`~agentd.api.SessionApi`
(:mod:`agentd.frontend`: the in-process service, or the shared daemon) and the answers
back; nothing here runs an agent. The calls that watch a session pass the
:class:`~agentd.acp.relay.Relay`, which receives the session's events and requests.

=========================== =====================================================
ACP                         agentd
=========================== =====================================================
``initialize``              answered here (capabilities); the backend starts
``authenticate``            a no-op: agentd needs no ACP authentication
``session/new``             ``session/new`` (+ ``models/list`` for the model option);
                            ``mcpServers`` passed on (stdio and http)
``session/load``            ``session/load`` with ``replay`` (history as updates)
``session/resume``          ``session/load`` without replay
``session/list``            ``session/list``
``session/close``           ``session/cancel``, ``session/unsubscribe`` (in-process:
                            ``session/close``)
``session/fork``            ``session/fork`` + ``session/load`` without replay
``session/delete``          ``session/delete`` (an open session closed first)
``session/prompt``          ``session/prompt`` (+ ``session/state`` for usage); a built-in
                            ``/compact`` is ``session/compact`` (:mod:`agentd.acp.builtins`)
``session/cancel``          ``session/cancel``
``session/set_mode``        ``session/setPermissionMode``
``session/set_config_option`` ``session/setPermissionMode`` or ``session/setModel``
=========================== =====================================================

With ``--shared`` the editor's provider variables (``LLM_*``, ``OPENAI_*``, ``ANTHROPIC_*``,
``*_API_KEY``) go with the session methods as ``providerEnv``, as ``agentctl`` sends its own:
the shared daemon may have been started from another environment.

Native errors keep their message; an unknown session is ACP's -32002 (resource not found), a
busy one -32600 (invalid request). A run that fails answers ``session/prompt`` with -32603
and the failure's message.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agentd import __version__
from agentd.acp.builtins import builtin_call, run_builtin
from agentd.acp.commands import CommandAnnouncer
from agentd.acp.forks import fork, usage_update
from agentd.acp.outcome import ResourceNotFound, acp_errors, check_cwd, mcp_servers, stop_reason
from agentd.acp.prompt import prompt_parts
from agentd.acp.relay import Relay
from agentd.acp.session import (
    MODE_OPTION,
    MODEL_OPTION,
    AcpSession,
    check_mode,
    split_model,
)
from agentd.errors import InternalError, InvalidParams, InvalidRequest, RpcError
from agentd.frontend import FrontEndOptions, FrontEndSessions, open_sessions
from agentd.log import get_logger
from agentd.protocol import acp
from agentd.protocol.methods import (
    FileAccessCapabilities,
    ModelsListParams,
    PermissionMode,
    PromptParams,
    SessionDeleteParams,
    SessionIdParams,
    SessionListParams,
    SessionLoadParams,
    SetModelParams,
    SetPermissionModeParams,
)
from agentd.protocol.methods import (
    SessionInfo as NativeSessionInfo,
)
from agentd.rpc import Connection, Router

if TYPE_CHECKING:
    from agentd.api import SessionApi

log = get_logger("agentd.acp")


class AcpAgent:
    """The ACP side of ``agentd acp``: one editor connection, many sessions."""

    def __init__(self, options: FrontEndOptions) -> None:
        self.options = options
        self.sessions: dict[str, AcpSession] = {}
        self.editor: Connection | None = None
        self.relay = Relay(self._editor_conn, self.sessions, self._cancel_turn)
        self._backend: asyncio.Task[FrontEndSessions] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._initialized: set[int] = set()  # ids of connections past initialize
        self.commands = CommandAnnouncer(self._api, self._send_update, lambda: list(self.sessions))

    def _editor_conn(self) -> Connection:
        if self.editor is None:
            raise RuntimeError("no editor connection")
        return self.editor

    def router(self) -> Router:
        """The editor connection's method table."""
        router = Router()
        router.add_guard(self._guard)
        router.add("initialize", self.initialize, acp.InitializeParams)
        router.add("authenticate", self.authenticate, acp.AuthenticateParams)
        router.add("session/new", self.new_session, acp.NewSessionParams)
        router.add("session/load", self.load_session, acp.LoadSessionParams)
        router.add("session/resume", self.resume_session, acp.LoadSessionParams)
        router.add("session/list", self.list_sessions, acp.ListSessionsParams)
        router.add("session/close", self.close_session, acp.SessionIdParams)
        router.add("session/fork", self.fork_session, acp.ForkSessionParams)
        router.add("session/delete", self.delete_session, acp.SessionIdParams)
        router.add("session/prompt", self.prompt, acp.PromptParams)
        router.add("session/set_mode", self.set_mode, acp.SetModeParams)
        router.add("session/set_config_option", self.set_config_option, acp.SetConfigOptionParams)
        router.on_notification("session/cancel", self.cancel, acp.SessionIdParams)
        return router

    # --- lifecycle ---------------------------------------------------------------------------

    def _guard(self, conn: Connection, method: str) -> None:
        if conn.id not in self._initialized and method != "initialize":
            raise InvalidRequest(f"call initialize before {method}")

    def initialize(self, conn: Connection, params: acp.InitializeParams) -> acp.InitializeResult:
        """Capabilities at once; the backend starts in the background."""
        if conn.id in self._initialized:
            raise InvalidRequest("initialize was already called on this connection")
        self._initialized.add(conn.id)
        fs = params.client_capabilities.fs
        meta = params.client_capabilities.meta
        conn.sends_cancels = conn.sends_cancels or bool(meta and meta.get("cancelRequest") is True)
        self.relay.fs = FileAccessCapabilities(
            read_text_file=fs.read_text_file, write_text_file=fs.write_text_file
        )
        elicitation = params.client_capabilities.elicitation
        self.relay.questions.form = elicitation is not None and elicitation.form is not None
        self._backend = asyncio.get_running_loop().create_task(
            open_sessions(self.options, "agentd-acp", self.relay.fs)
        )
        log.info(
            "acp client initialized",
            client=params.client_info.name if params.client_info else None,
            protocol_version=params.protocol_version,
            fs_read=fs.read_text_file,
            fs_write=fs.write_text_file,
        )
        return acp.InitializeResult(
            protocol_version=acp.ACP_PROTOCOL_VERSION,
            agent_capabilities=acp.AgentCapabilities(
                load_session=True,
                prompt_capabilities=acp.PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=acp.McpCapabilities(http=True),
                session_capabilities=acp.SessionCapabilities(
                    list=acp.Supported(),
                    resume=acp.Supported(),
                    close=acp.Supported(),
                    fork=acp.Supported(),
                    delete=acp.Supported(),
                ),
            ),
            auth_methods=[],
            agent_info=acp.Implementation(name="agentd", title="agentd", version=__version__),
        )

    def authenticate(self, conn: Connection, params: acp.AuthenticateParams) -> dict[str, Any]:
        """Nothing to do: agentd offers no ACP auth methods (providers and keys are agentd's
        configuration), so whatever method a client names is accepted as a no-op."""
        log.info("authenticate is a no-op", method_id=params.method_id)
        return {}

    async def close(self) -> None:
        """Stop the backend (in-process: runs cancelled, session files flushed)."""
        self.relay.closed = True
        await self.commands.close()
        for task in list(self._tasks):
            task.cancel()
        if self._backend is None:
            return
        self._backend.cancel()
        try:
            backend = await self._backend
        except (asyncio.CancelledError, Exception):
            return
        await backend.close()

    async def _api(self) -> SessionApi:
        """The session API, once the backend is up."""
        if self._backend is None:
            raise InvalidRequest("call initialize first")
        try:
            backend = await asyncio.shield(self._backend)
        except OSError as exc:
            raise InternalError(f"cannot reach agentd: {exc}") from None
        return backend.api

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise ResourceNotFound(
                f"unknown session {session_id!r}: open it with session/new or session/load"
            )
        return session

    def _later(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- sessions ----------------------------------------------------------------------------

    async def new_session(
        self, conn: Connection, params: acp.NewSessionParams
    ) -> acp.NewSessionResult:
        check_cwd(params.cwd)
        native = self.options.new_session(params.cwd, mcp_servers(params.mcp_servers))
        api = await self._api()
        with acp_errors():
            info = await api.create(native, self.relay)
        session = await self._opened(info)
        return acp.NewSessionResult(
            session_id=info.session_id,
            modes=session.modes(),
            config_options=session.config_options(),
        )

    async def _opened(self, info: NativeSessionInfo) -> AcpSession:
        """A session this editor now follows: its modes, models, commands."""
        session = AcpSession(
            info.session_id, info.cwd, info.permission_mode, info.provider, info.model
        )
        self.sessions[info.session_id] = session
        await self._load_models(session)
        self._later(self.commands.refresh(info.session_id))  # once the answer is out
        return session

    async def fork_session(
        self, conn: Connection, params: acp.ForkSessionParams
    ) -> acp.ForkSessionResult:
        """``session/fork`` (:func:`agentd.acp.forks.fork`), followed by this editor."""
        check_cwd(params.cwd)
        info = await fork(await self._api(), self.relay, params)
        session = await self._opened(info)
        return acp.ForkSessionResult(
            session_id=info.session_id,
            modes=session.modes(),
            config_options=session.config_options(),
        )

    async def delete_session(self, conn: Connection, params: acp.SessionIdParams) -> dict[str, Any]:
        """``session/delete``: the session's file is removed (refused while it runs); an open
        one is closed for this editor first."""
        if params.session_id in self.sessions:
            await self.close_session(conn, params)
        api = await self._api()
        with acp_errors():
            await api.delete(SessionDeleteParams(session_id=params.session_id))
        return {}

    async def load_session(
        self, conn: Connection, params: acp.LoadSessionParams, *, replay: bool = True
    ) -> acp.LoadSessionResult:
        check_cwd(params.cwd)
        session = AcpSession(params.session_id, params.cwd, "auto", "", "")
        previous = self.sessions.get(params.session_id)
        self.sessions[params.session_id] = session  # before the replayed history arrives
        try:
            native = SessionLoadParams(
                session_id=params.session_id,
                replay=replay,
                mcp_servers=mcp_servers(params.mcp_servers),
            )
            api = await self._api()
            with acp_errors():
                loaded = await api.load(native, self.relay)
        except BaseException:
            if self.sessions.get(params.session_id) is session:
                del self.sessions[params.session_id]
                if previous is not None:
                    self.sessions[params.session_id] = previous
            raise
        info = loaded.session
        session.mode, session.provider, session.model = (
            info.permission_mode,
            info.provider,
            info.model,
        )
        await self._load_models(session)
        self._later(self.commands.refresh(params.session_id))
        return acp.LoadSessionResult(modes=session.modes(), config_options=session.config_options())

    async def resume_session(
        self, conn: Connection, params: acp.LoadSessionParams
    ) -> acp.LoadSessionResult:
        return await self.load_session(conn, params, replay=False)

    async def _load_models(self, session: AcpSession) -> None:
        api = await self._api()
        with acp_errors():
            models = await api.models(ModelsListParams(cwd=session.cwd))
        session.models = models.models

    async def list_sessions(
        self, conn: Connection, params: acp.ListSessionsParams
    ) -> acp.ListSessionsResult:
        native = SessionListParams(cwd=params.cwd, cursor=params.cursor)
        api = await self._api()
        with acp_errors():
            page = await api.list(native)
        return acp.ListSessionsResult(
            sessions=[
                acp.SessionInfo(
                    session_id=s.session_id, cwd=s.cwd, title=s.title, updated_at=s.updated_at
                )
                for s in page.sessions
            ],
            next_cursor=page.next_cursor,
        )

    async def close_session(self, conn: Connection, params: acp.SessionIdParams) -> dict[str, Any]:
        self._session(params.session_id)
        ids = SessionIdParams(session_id=params.session_id)
        api = await self._api()
        with acp_errors():
            await api.cancel(ids)
            await api.unsubscribe(ids, self.relay)
            if not self.options.shared:
                await api.close_session(ids)
        self.sessions.pop(params.session_id, None)
        self.commands.forget(params.session_id)
        return {}

    # --- runs ----------------------------------------------------------------------------------

    async def prompt(self, conn: Connection, params: acp.PromptParams) -> acp.PromptResult:
        session = self._session(params.session_id)
        text, images = prompt_parts(params.prompt)
        session.mapper.last_turn_stop = None
        api = await self._api()
        if (builtin := builtin_call(text)) is not None:
            with acp_errors():
                return await run_builtin(api, session.session_id, builtin, self._send_update)
        native = PromptParams(session_id=params.session_id, text=text, images=images)
        with acp_errors():
            result = await api.prompt(native, self.relay)
        await self._send_usage(session)
        self._later(self.commands.refresh(session.session_id))
        return acp.PromptResult(stop_reason=stop_reason(result, session.mapper.last_turn_stop))

    async def _send_usage(self, session: AcpSession) -> None:
        update = await usage_update(await self._api(), session)
        if update is not None:
            self._send_update(session.session_id, update)

    def _send_update(self, session_id: str, update: acp.SessionUpdate) -> None:
        notification = acp.SessionNotification(session_id=session_id, update=update)
        self._editor_conn().notify("session/update", notification)

    async def cancel(self, conn: Connection, params: acp.SessionIdParams) -> None:
        if params.session_id in self.sessions:
            await self._cancel_turn(params.session_id)

    async def _cancel_turn(self, session_id: str) -> None:
        """Cancel the session's prompt turn (``session/cancel``, a ``cancelled`` approval)."""
        try:
            api = await self._api()
            await api.cancel(SessionIdParams(session_id=session_id))
        except RpcError as exc:
            log.info("cancel failed", session_id=session_id, error=exc.message)

    async def set_mode(self, conn: Connection, params: acp.SetModeParams) -> dict[str, Any]:
        session = self._session(params.session_id)
        await self._apply_mode(session, check_mode(params.mode_id))  # the relay tells the editor
        return {}

    async def set_config_option(
        self, conn: Connection, params: acp.SetConfigOptionParams
    ) -> acp.SetConfigOptionResult:
        session = self._session(params.session_id)
        if not isinstance(params.value, str):
            raise InvalidParams(f"config option {params.config_id!r} takes a string value")
        if params.config_id == MODE_OPTION:
            await self._apply_mode(session, check_mode(params.value))
        elif params.config_id == MODEL_OPTION:
            provider, model = split_model(params.value)
            native = SetModelParams(session_id=session.session_id, model=model, provider=provider)
            api = await self._api()
            with acp_errors():
                await api.set_model(native)  # its settings_changed updated ``session``
        else:
            raise InvalidParams(
                f"unknown config option {params.config_id!r}; use {MODE_OPTION!r} or "
                f"{MODEL_OPTION!r}"
            )
        return acp.SetConfigOptionResult(config_options=session.config_options())

    async def _apply_mode(self, session: AcpSession, mode: PermissionMode) -> None:
        native = SetPermissionModeParams(session_id=session.session_id, mode=mode)
        api = await self._api()
        with acp_errors():  # its settings_changed updates ``session`` (through the relay)
            await api.set_permission_mode(native)
