"""The JSON API: ``POST /api/<method>`` with the native params, answered with the native result.

Method names, params and results are those of the JSON-RPC protocol (``schemas/README.md``),
so the page's host forwards the UI's calls unchanged. Each call goes to the daemon's
:class:`~agentd.session.service.SessionService`. Errors are ``{"error": {"code", "message"}}``
with the JSON-RPC code and an HTTP status that fits it (:func:`http_status`).

``session/prompt`` answers when the run ends, like over JSON-RPC; a client that goes away
meanwhile does not stop the run (``session/cancel`` does). Event streams are not methods here:
see ``GET /api/events`` in :mod:`agentd.web.server`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from agentd.errors import InvalidParams, MethodNotFound, RpcError
from agentd.protocol.methods import (
    CompactParams,
    ModelsListParams,
    OkResult,
    PromptParams,
    SessionDeleteParams,
    SessionExportParams,
    SessionExportResult,
    SessionForkParams,
    SessionIdParams,
    SessionListParams,
    SessionLoadParams,
    SessionNewParams,
    SessionRenameParams,
    SessionTextParams,
    SetModelParams,
)
from agentd.protocol.web import PermissionAnswerParams

if TYPE_CHECKING:
    from agentd.session.service import SessionService

Call = Callable[["SessionService", Any], Awaitable[Any]]

_encode = msgspec.json.Encoder().encode


async def _ok(result: Awaitable[Any]) -> OkResult:
    await result
    return OkResult()


async def _prompt(service: SessionService, params: PromptParams) -> Any:
    run = await service.start_prompt(params)
    return await run.result()


async def _export(service: SessionService, params: SessionExportParams) -> SessionExportResult:
    content = await service.export(params.session_id, params.format)
    return SessionExportResult(format=params.format, content=content)


async def _answer(service: SessionService, params: PermissionAnswerParams) -> OkResult:
    answered = service.answer_permission(params.session_id, params.tool_call_id, params.outcome)
    return OkResult(ok=answered)


async def _models(service: SessionService, params: ModelsListParams) -> Any:
    return service.models(params.cwd)


METHODS: dict[str, tuple[type[Any], Call]] = {
    "session/list": (SessionListParams, lambda s, p: s.list(p)),
    "session/new": (SessionNewParams, lambda s, p: s.create(p)),
    "session/load": (SessionLoadParams, lambda s, p: s.load(p)),
    "session/fork": (SessionForkParams, lambda s, p: s.fork(p)),
    "session/delete": (SessionDeleteParams, lambda s, p: _ok(s.delete(p))),
    "session/rename": (SessionRenameParams, lambda s, p: _ok(s.rename(p.session_id, p.title))),
    "session/export": (SessionExportParams, _export),
    "session/prompt": (PromptParams, _prompt),
    "session/steer": (SessionTextParams, lambda s, p: _ok(s.steer(p.session_id, p.text))),
    "session/followUp": (SessionTextParams, lambda s, p: _ok(s.follow_up(p.session_id, p.text))),
    "session/cancel": (SessionIdParams, lambda s, p: s.cancel(p.session_id)),
    "session/state": (SessionIdParams, lambda s, p: s.state(p.session_id)),
    "session/messages": (SessionIdParams, lambda s, p: s.messages(p.session_id)),
    "session/setModel": (
        SetModelParams,
        lambda s, p: s.set_model(p.session_id, p.provider, p.model),
    ),
    "session/compact": (CompactParams, lambda s, p: s.compact(p)),
    "models/list": (ModelsListParams, _models),
    "permission/answer": (PermissionAnswerParams, _answer),
}
"""``{path after /api/: (params type, call)}``."""


async def call(service: SessionService, method: str, body: bytes) -> bytes:
    """Run ``method`` with the JSON ``body``; the encoded result. Raises RpcError."""
    entry = METHODS.get(method)
    if entry is None:
        raise MethodNotFound(f"no API method {method!r}")
    params_type, handler = entry
    try:
        params = msgspec.json.decode(body or b"{}", type=params_type)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise InvalidParams(str(exc)) from None
    return _encode(await handler(service, params))


def error_body(error: RpcError) -> bytes:
    """The JSON body of an error answer."""
    return _encode({"error": {"code": error.code, "message": error.message}})


def http_status(error: RpcError) -> int:
    """The HTTP status for a JSON-RPC error code."""
    return {
        -32700: 400,
        -32600: 400,
        -32601: 404,
        -32602: 400,
        -32001: 401,
        -32002: 409,
        -32003: 404,
        -32005: 400,
        -32006: 409,
        -32009: 409,
        -32010: 409,
    }.get(error.code, 500)
