"""The daemon's JSON-RPC method table: every method's handler, registered in one place.

Each handler adapts one JSON-RPC call to :class:`~agentd.session.service.SessionService` (or to
the lifecycle methods): it finds the connection's :class:`~agentd.jsonrpc.clients.Client` (the
subscriber for that connection) and passes the decoded params on. :func:`build_router` checks
that the table covers exactly the client-callable methods of :data:`agentd.protocol.table.METHODS`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentd.errors import InvalidParams
from agentd.jsonrpc.lifecycle import DaemonControl, Lifecycle, guard
from agentd.protocol.methods import (
    CancelResult,
    CompactParams,
    CompactResult,
    MessagesResult,
    ModelsListParams,
    ModelsListResult,
    OkResult,
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
    SetPermissionModeParams,
    SubscribeParams,
    SubscribeResult,
)
from agentd.protocol.table import METHODS
from agentd.rpc import Router

if TYPE_CHECKING:
    from agentd.jsonrpc.clients import Client
    from agentd.rpc import Connection, Handler
    from agentd.session.service import SessionService

ClientOf = Callable[["Connection"], "Client"]
"""Finds the daemon's :class:`Client` record of a connection."""


def build_router(daemon: DaemonControl, service: SessionService) -> Router:
    """The router of every connection: the guard, then one handler per method."""
    table = lifecycle_handlers(Lifecycle(daemon)) | session_handlers(service, daemon.client)
    expected = {name for name, spec in METHODS.items() if spec.direction == "client"}
    if set(table) != expected:
        raise RuntimeError(f"handler table differs from METHODS: {sorted(set(table) ^ expected)}")
    router = Router()
    router.add_guard(lambda conn, method: guard(daemon.client(conn), method))
    for method, handler in table.items():
        router.add(method, handler, METHODS[method].params)
    return router


def check_provider_env(
    conn: Connection, provider_env: dict[str, str] | None
) -> dict[str, str] | None:
    """A request's ``providerEnv``, accepted from same-machine clients only (Unix socket,
    stdio, in-process); InvalidParams over TCP, where it would put keys on the network."""
    if provider_env is not None and conn.transport == "tcp":
        raise InvalidParams("`providerEnv` is accepted over the Unix socket or stdio only")
    return provider_env


def lifecycle_handlers(lifecycle: Lifecycle) -> dict[str, Handler]:
    """``initialize``, ``shutdown``, ``daemon/status``: plain functions, so they run inline (a
    request pipelined right after ``initialize`` already sees the connection initialized);
    ``daemon/web`` is async (it may bind a socket)."""
    return {
        "initialize": lifecycle.initialize,
        "shutdown": lifecycle.shutdown,
        "daemon/status": lifecycle.status,
        "daemon/web": lifecycle.web,
    }


def session_handlers(service: SessionService, client: ClientOf) -> dict[str, Handler]:
    """Every ``session/*`` and ``models/*`` method, bound to ``service``."""

    async def new(conn: Connection, params: SessionNewParams) -> SessionInfo:
        check_provider_env(conn, params.provider_env)
        return await service.create(params, client(conn))

    async def prompt(conn: Connection, params: PromptParams) -> PromptResult:
        run = await service.start_prompt(params, client(conn))
        try:
            return await run.result()
        except asyncio.CancelledError:
            if not conn.stopping:  # $/cancelRequest on the prompt: cancel the run as well,
                run.cancel()  # and answer after its agent_end, as session/cancel does
                await run.settled()
            raise  # the client went away: the run goes on

    async def steer(conn: Connection, params: SessionTextParams) -> OkResult:
        await service.steer(params.session_id, params.text)
        return OkResult()

    async def follow_up(conn: Connection, params: SessionTextParams) -> OkResult:
        await service.follow_up(params.session_id, params.text)
        return OkResult()

    async def cancel(conn: Connection, params: SessionIdParams) -> CancelResult:
        return await service.cancel(params.session_id)

    async def state(conn: Connection, params: SessionIdParams) -> SessionStateResult:
        return await service.state(params.session_id)

    async def messages(conn: Connection, params: SessionIdParams) -> MessagesResult:
        return await service.messages(params.session_id)

    async def set_model(conn: Connection, params: SetModelParams) -> SessionInfo:
        env = check_provider_env(conn, params.provider_env)
        return await service.set_model(params.session_id, params.provider, params.model, env)

    async def set_permission_mode(conn: Connection, params: SetPermissionModeParams) -> SessionInfo:
        return await service.set_permission_mode(params.session_id, params.mode)

    async def models(conn: Connection, params: ModelsListParams) -> ModelsListResult:
        return service.models(params.cwd, check_provider_env(conn, params.provider_env))

    async def list_(conn: Connection, params: SessionListParams) -> SessionListResult:
        return await service.list(params)

    async def load(conn: Connection, params: SessionLoadParams) -> SessionLoadResult:
        check_provider_env(conn, params.provider_env)
        return await service.load(params, client(conn))

    async def fork(conn: Connection, params: SessionForkParams) -> SessionInfo:
        return await service.fork(params, client(conn))

    async def branch(conn: Connection, params: SessionBranchParams) -> OkResult:
        await service.branch(params.session_id, params.entry_id)
        return OkResult()

    async def rename(conn: Connection, params: SessionRenameParams) -> OkResult:
        await service.rename(params.session_id, params.title)
        return OkResult()

    async def note(conn: Connection, params: SessionNoteParams) -> OkResult:
        await service.note(params.session_id, params.text)
        return OkResult()

    async def delete(conn: Connection, params: SessionDeleteParams) -> OkResult:
        await service.delete(params)
        return OkResult()

    async def close(conn: Connection, params: SessionIdParams) -> OkResult:
        await service.close_session(params.session_id)
        return OkResult()

    async def export(conn: Connection, params: SessionExportParams) -> SessionExportResult:
        content = await service.export(params.session_id, params.format)
        return SessionExportResult(format=params.format, content=content)

    async def subscribe(conn: Connection, params: SubscribeParams) -> SubscribeResult:
        return await service.subscribe(params.session_id, client(conn), params.since_seq)

    async def unsubscribe(conn: Connection, params: SessionIdParams) -> OkResult:
        return OkResult(ok=service.unsubscribe(params.session_id, client(conn)))

    async def compact(conn: Connection, params: CompactParams) -> CompactResult:
        return await service.compact(params)

    return {
        "session/new": new,
        "session/prompt": prompt,
        "session/steer": steer,
        "session/followUp": follow_up,
        "session/cancel": cancel,
        "session/state": state,
        "session/messages": messages,
        "session/setModel": set_model,
        "session/setPermissionMode": set_permission_mode,
        "models/list": models,
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
