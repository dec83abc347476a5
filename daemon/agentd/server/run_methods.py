"""Handlers of the methods that create sessions and drive runs.

``session/new``, ``session/prompt``, ``session/steer``, ``session/followUp``,
``session/cancel``, ``session/state``, ``session/messages``, ``session/setModel``,
``session/setPermissionMode``, ``models/list``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import msgspec

from agentd.budget import Budget
from agentd.errors import InvalidParams, SessionIdle
from agentd.protocol.methods import (
    CancelResult,
    MessagesResult,
    ModelsListParams,
    ModelsListResult,
    OkResult,
    PromptParams,
    PromptResult,
    SessionIdParams,
    SessionInfo,
    SessionNewParams,
    SessionStateResult,
    SessionTextParams,
    SetModelParams,
    SetPermissionModeParams,
)
from agentd.server.runtime import prompt_result
from agentd.server.sessions import client_env

if TYPE_CHECKING:
    from agentd.rpc import Connection, Router
    from agentd.server.sessions import SessionManager


def register(router: Router, sessions: SessionManager) -> None:
    """Register this module's handlers, bound to ``sessions``."""

    async def new(conn: Connection, params: SessionNewParams) -> SessionInfo:
        client_env(conn, params.provider_env)
        return (await sessions.create(params, conn)).info()

    async def prompt(conn: Connection, params: PromptParams) -> PromptResult:
        if not params.text.strip() and not params.images:
            raise InvalidParams("`text` is empty - at `$.text`")
        runtime = await sessions.get(params.session_id)
        if conn.id not in runtime.bus.subscribers:
            sessions.watch(runtime, conn)
        budget = None
        if params.max_cost is not None or params.max_tokens is not None:
            budget = Budget(max_cost=params.max_cost, max_tokens=params.max_tokens)
        task = runtime.start_run(params.text, params.images, params.max_turns, budget)
        try:
            return prompt_result(await asyncio.shield(task))
        except asyncio.CancelledError:
            if not conn.stopping:  # $/cancelRequest on the prompt: cancel the run as well,
                runtime.cancel()  # and answer after its agent_end, as session/cancel does
                await asyncio.gather(task, return_exceptions=True)
            raise  # the client went away: the run goes on

    async def queue(params: SessionTextParams, *, steer: bool) -> OkResult:
        runtime = await sessions.get(params.session_id)
        if not runtime.running:
            raise SessionIdle(
                f"session {runtime.id} is not running; send the text with session/prompt"
            )
        runtime.agent.enqueue(params.text, steer=steer)
        return OkResult()

    async def steer(conn: Connection, params: SessionTextParams) -> OkResult:
        return await queue(params, steer=True)

    async def follow_up(conn: Connection, params: SessionTextParams) -> OkResult:
        return await queue(params, steer=False)

    async def cancel(conn: Connection, params: SessionIdParams) -> CancelResult:
        runtime = sessions.loaded.get(params.session_id)
        if runtime is None:
            sessions.find_path(params.session_id)  # SessionNotFound for unknown ids
            return CancelResult(cancelled=False)
        result = runtime.cancel()
        if runtime.run_task is not None:
            await asyncio.gather(runtime.run_task, return_exceptions=True)
        return result

    async def state(conn: Connection, params: SessionIdParams) -> SessionStateResult:
        return (await sessions.get(params.session_id)).state()

    async def messages(conn: Connection, params: SessionIdParams) -> MessagesResult:
        runtime = await sessions.get(params.session_id)
        result = MessagesResult(messages=list(runtime.agent.messages))
        redacted = runtime.file.redact_json(msgspec.json.encode(result))
        return msgspec.json.decode(redacted, type=MessagesResult)

    async def set_model(conn: Connection, params: SetModelParams) -> SessionInfo:
        from agentd.server.factory import switch_model

        runtime = await sessions.get(params.session_id)
        env = client_env(conn, params.provider_env)
        await switch_model(sessions.services, runtime, params.provider, params.model, env)
        return runtime.info()

    async def set_permission_mode(conn: Connection, params: SetPermissionModeParams) -> SessionInfo:
        runtime = await sessions.get(params.session_id)
        runtime.set_permission_mode(params.mode)
        return runtime.info()

    async def models(conn: Connection, params: ModelsListParams) -> ModelsListResult:
        return sessions.services.models(params.cwd, client_env(conn, params.provider_env))

    router.add("session/new", new)
    router.add("session/prompt", prompt)
    router.add("session/steer", steer)
    router.add("session/followUp", follow_up)
    router.add("session/cancel", cancel)
    router.add("session/state", state)
    router.add("session/messages", messages)
    router.add("session/setModel", set_model)
    router.add("session/setPermissionMode", set_permission_mode)
    router.add("models/list", models)
