"""The daemon's JSON-RPC handlers: one loop over the method table.

Every client method of :data:`agentd.protocol.table.METHODS` served over JSON-RPC gets one
handler: the lifecycle methods (``call`` None) from :class:`~agentd.jsonrpc.lifecycle.Lifecycle`,
the session methods from the :class:`~agentd.session.service.SessionService` method the entry
names. A session handler passes the connection's :class:`~agentd.jsonrpc.clients.Client` as the
subscriber when the entry ``subscribes``, and refuses ``local_only`` fields over TCP.

The one special case is ``session/prompt``: a ``$/cancelRequest`` on it cancels the run as
well (answered after its ``agent_end``, as ``session/cancel`` does), while a client that goes
away leaves the run going.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agentd.api.contract import refuse_local_only
from agentd.jsonrpc.lifecycle import DaemonControl, Lifecycle, guard
from agentd.protocol.methods import PromptParams, PromptResult
from agentd.protocol.table import METHODS, MethodSpec
from agentd.rpc import Router

if TYPE_CHECKING:
    from agentd.jsonrpc.clients import Client
    from agentd.rpc import Connection, Handler
    from agentd.session.service import SessionService

ClientOf = Callable[["Connection"], "Client"]
"""Finds the daemon's :class:`Client` record of a connection."""
REMOTE_TRANSPORTS = frozenset({"tcp"})
"""Transports that are not the same machine's: ``local_only`` fields are refused there."""


def build_router(daemon: DaemonControl, service: SessionService) -> Router:
    """The router of every connection: the guard, then one handler per method."""
    table = lifecycle_handlers(Lifecycle(daemon)) | session_handlers(service, daemon.client)
    expected = {n for n, spec in METHODS.items() if spec.direction == "client" and spec.rpc}
    if set(table) != expected:
        raise RuntimeError(f"handler table differs from METHODS: {sorted(set(table) ^ expected)}")
    router = Router()
    router.add_guard(lambda conn, method: guard(daemon.client(conn), method))
    for method, handler in table.items():
        router.add(method, handler, METHODS[method].params)
    return router


def lifecycle_handlers(lifecycle: Lifecycle) -> dict[str, Handler]:
    """``initialize``, ``shutdown``, ``daemon/status``: plain functions, so they run inline (a
    request pipelined right after ``initialize`` already sees the connection initialized);
    ``daemon/web`` is async (it may bind a socket)."""
    return {
        "initialize": lifecycle.initialize,
        "shutdown": lifecycle.shutdown,
        "daemon/status": lifecycle.status,
        "daemon/metrics": lifecycle.metrics,
        "daemon/web": lifecycle.web,
    }


def session_handlers(service: SessionService, client: ClientOf) -> dict[str, Handler]:
    """A handler for every table entry with a ``call`` served over JSON-RPC."""
    handlers: dict[str, Handler] = {}
    for method, spec in METHODS.items():
        if spec.call is None or not spec.rpc or spec.direction != "client":
            continue
        if method == "session/prompt":
            handlers[method] = _prompt_handler(service, client)
        else:
            handlers[method] = _session_handler(spec, getattr(service, spec.call), client)
    return handlers


def _session_handler(
    spec: MethodSpec, call: Callable[[Any, Any], Awaitable[Any]], client: ClientOf
) -> Handler:
    async def handle(conn: Connection, params: Any) -> Any:
        if conn.transport in REMOTE_TRANSPORTS:
            refuse_local_only(spec, params)
        return await call(params, client(conn) if spec.subscribes else None)

    return handle


def _prompt_handler(service: SessionService, client: ClientOf) -> Handler:
    async def prompt(conn: Connection, params: PromptParams) -> PromptResult:
        run = await service.start_prompt(params, client(conn))
        try:
            return await run.result()
        except asyncio.CancelledError:
            if not conn.stopping:  # $/cancelRequest on the prompt: cancel the run as well,
                run.cancel()  # and answer after its agent_end, as session/cancel does
                await run.settled()
            raise  # the client went away: the run goes on

    return prompt
