"""Typed helpers for the daemon's methods, mixed into :class:`agentctl.client.AgentClient`.

Each helper builds the method's params Struct (so a wrong argument fails before anything is
sent) and decodes the result into the method's result Struct from ``agentd.protocol.methods``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from agentd.protocol.base import Empty
from agentd.protocol.content import ImageContent, Message
from agentd.protocol.methods import (
    CancelResult,
    CompactParams,
    CompactResult,
    DaemonStatusResult,
    MessagesResult,
    ModelsListParams,
    ModelsListResult,
    OkResult,
    PermissionMode,
    PromptParams,
    PromptResult,
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
    SessionNewParams,
    SessionNoteParams,
    SessionRenameParams,
    SessionStateResult,
    SessionTextParams,
    SetModelParams,
    SubscribeParams,
    SubscribeResult,
)

T = TypeVar("T")


class SessionMethods:
    """One coroutine per JSON-RPC method; see ``schemas/README.md`` for their semantics.

    ``provider_env`` (set by :func:`agentctl.client.connect` to this process's provider
    variables, see :mod:`agentd.protocol.provider_env`) goes with ``session/new``,
    ``session/load``, ``session/setModel`` and ``models/list``, so sessions use the caller's
    current API keys rather than those the daemon started with. None sends nothing.
    """

    provider_env: dict[str, str] | None = None

    async def call(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: Any = Any,
        timeout: float | None = None,
    ) -> Any:
        """Send a request and return its decoded result (implemented by the client)."""
        raise NotImplementedError

    async def _typed(self, method: str, params: Any, result_type: type[T]) -> T:
        """Call ``method`` and return its result decoded as ``result_type``."""
        return cast(T, await self.call(method, params, result_type=result_type))

    # --- daemon ----------------------------------------------------------------------------

    async def status(self) -> DaemonStatusResult:
        """``daemon/status``: version, pid, uptime, connections, loaded sessions."""
        return await self._typed("daemon/status", Empty(), DaemonStatusResult)

    async def shutdown(self) -> None:
        """``shutdown``: the daemon answers, then stops."""
        await self.call("shutdown", Empty(), result_type=OkResult)

    async def list_models(self, cwd: str | None = None) -> ModelsListResult:
        """``models/list``: the providers and models the configuration of ``cwd`` offers."""
        params = ModelsListParams(
            cwd=str(Path(cwd).resolve()) if cwd else None, provider_env=self.provider_env
        )
        return await self._typed("models/list", params, ModelsListResult)

    # --- sessions and runs -----------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        tools: list[str] | None = None,
        permission_mode: PermissionMode | None = None,
        session_id: str | None = None,
        title: str | None = None,
        max_turns: int | None = None,
        base_url: str | None = None,
    ) -> SessionInfo:
        """``session/new``: open a session; its events come to this connection.

        A relative ``cwd`` is taken relative to this process's working directory.
        """
        params = SessionNewParams(
            cwd=str(Path(cwd).resolve()),
            provider=provider,
            model=model,
            system_prompt=system_prompt,
            tools=tools,
            permission_mode=permission_mode,
            session_id=session_id,
            title=title,
            max_turns=max_turns,
            base_url=base_url,
            provider_env=self.provider_env,
        )
        return await self._typed("session/new", params, SessionInfo)

    async def prompt(
        self,
        session_id: str,
        text: str,
        images: list[ImageContent] | None = None,
        *,
        max_turns: int | None = None,
        max_cost: float | None = None,
        max_tokens: int | None = None,
    ) -> PromptResult:
        """``session/prompt``: run the agent; returns when the run has ended.

        ``max_turns`` limits this run only (default: the session's limit); ``max_cost`` (USD)
        and ``max_tokens`` cap its spending (stop reason ``budget``).
        """
        params = PromptParams(
            session_id=session_id,
            text=text,
            images=images or [],
            max_turns=max_turns,
            max_cost=max_cost,
            max_tokens=max_tokens,
        )
        return await self._typed("session/prompt", params, PromptResult)

    async def note(self, session_id: str, text: str) -> None:
        """``session/note``: record ``text`` as a user message of an idle session, no run.

        The model reads it with the next prompt; SessionBusy (-32002) while a run is going.
        """
        params = SessionNoteParams(session_id=session_id, text=text)
        await self.call("session/note", params, result_type=OkResult)

    async def steer(self, session_id: str, text: str) -> None:
        """``session/steer``: deliver ``text`` to the running run after its current tools."""
        params = SessionTextParams(session_id=session_id, text=text)
        await self.call("session/steer", params, result_type=OkResult)

    async def follow_up(self, session_id: str, text: str) -> None:
        """``session/followUp``: deliver ``text`` when the running run would stop."""
        params = SessionTextParams(session_id=session_id, text=text)
        await self.call("session/followUp", params, result_type=OkResult)

    async def cancel(self, session_id: str) -> CancelResult:
        """``session/cancel``: stop the running run (answers once it has stopped)."""
        params = SessionIdParams(session_id=session_id)
        return await self._typed("session/cancel", params, CancelResult)

    async def state(self, session_id: str) -> SessionStateResult:
        """``session/state``: idle or running, queues, usage."""
        params = SessionIdParams(session_id=session_id)
        return await self._typed("session/state", params, SessionStateResult)

    async def messages(self, session_id: str) -> list[Message]:
        """``session/messages``: the conversation on the session's current branch."""
        params = SessionIdParams(session_id=session_id)
        result = await self.call("session/messages", params, result_type=MessagesResult)
        return list(result.messages)

    async def set_model(
        self, session_id: str, model: str, provider: str | None = None
    ) -> SessionInfo:
        """``session/setModel``: switch model (and provider) for the next LLM call."""
        params = SetModelParams(
            session_id=session_id, model=model, provider=provider, provider_env=self.provider_env
        )
        return await self._typed("session/setModel", params, SessionInfo)

    # --- the session store -----------------------------------------------------------------

    async def list_sessions(
        self, *, cwd: str | None = None, limit: int = 50, cursor: str | None = None
    ) -> SessionListResult:
        """``session/list``: stored sessions, newest first, one page at a time.

        ``cwd`` (relative to this process's working directory) keeps the sessions of one
        directory.
        """
        params = SessionListParams(
            cwd=str(Path(cwd).resolve()) if cwd else None, limit=limit, cursor=cursor
        )
        return await self._typed("session/list", params, SessionListResult)

    async def load_session(
        self, session_id: str | None = None, *, path: str | None = None, replay: bool = False
    ) -> SessionLoadResult:
        """``session/load``: load by id or file path and watch its events.

        With ``replay`` the conversation so far arrives first, as ``message_end`` events with
        ``seq`` 0 (open an event stream before calling).
        """
        params = SessionLoadParams(
            session_id=session_id, path=path, replay=replay, provider_env=self.provider_env
        )
        return await self._typed("session/load", params, SessionLoadResult)

    async def fork_session(
        self, session_id: str, *, entry_id: str | None = None, new_session_id: str | None = None
    ) -> SessionInfo:
        """``session/fork``: a new session continuing from ``entry_id`` (default: the end)."""
        params = SessionForkParams(
            session_id=session_id, entry_id=entry_id, new_session_id=new_session_id
        )
        return await self._typed("session/fork", params, SessionInfo)

    async def branch_session(self, session_id: str, entry_id: str) -> None:
        """``session/branch``: continue the session from an earlier entry."""
        params = SessionBranchParams(session_id=session_id, entry_id=entry_id)
        await self._typed("session/branch", params, OkResult)

    async def rename_session(self, session_id: str, title: str) -> None:
        """``session/rename``."""
        params = SessionRenameParams(session_id=session_id, title=title)
        await self._typed("session/rename", params, OkResult)

    async def delete_session(self, session_id: str, *, force: bool = False) -> None:
        """``session/delete``: remove the session file (refused while running unless force)."""
        params = SessionDeleteParams(session_id=session_id, force=force)
        await self._typed("session/delete", params, OkResult)

    async def close_session(self, session_id: str) -> None:
        """``session/close``: unload the session from the daemon (its file is kept)."""
        await self._typed("session/close", SessionIdParams(session_id=session_id), OkResult)

    async def export_session(
        self, session_id: str, format: Literal["markdown", "html"] = "markdown"
    ) -> str:
        """``session/export``: the conversation as a Markdown or HTML document."""
        params = SessionExportParams(session_id=session_id, format=format)
        return (await self._typed("session/export", params, SessionExportResult)).content

    async def subscribe(self, session_id: str, since_seq: int | None = None) -> SubscribeResult:
        """``session/subscribe``: watch a session; replays buffered events after ``since_seq``.

        Open an event stream first. ``complete`` False means the buffer no longer reaches
        back that far: resync with :meth:`messages`.
        """
        params = SubscribeParams(session_id=session_id, since_seq=since_seq)
        return await self._typed("session/subscribe", params, SubscribeResult)

    async def unsubscribe(self, session_id: str) -> bool:
        """``session/unsubscribe``: stop watching; False if this client was not watching."""
        params = SessionIdParams(session_id=session_id)
        return (await self._typed("session/unsubscribe", params, OkResult)).ok

    async def compact(self, session_id: str, instructions: str | None = None) -> CompactResult:
        """``session/compact``: summarise older messages now."""
        params = CompactParams(session_id=session_id, instructions=instructions)
        return await self._typed("session/compact", params, CompactResult)
