"""The JSON API: ``POST /api/<method>`` with the native params, answered with the native result.

The methods are the entries of :data:`agentd.protocol.table.METHODS` marked ``http``, with
the params and results of the JSON-RPC protocol (``schemas/README.md``), so the page's host
forwards the UI's calls unchanged; each goes to the daemon's
:class:`~agentd.session.service.SessionService` method the entry names. Fields a
same-machine transport only may carry (``providerEnv``) are refused with the error JSON-RPC
over TCP gives. Errors are ``{"error": {"code", "message"}}`` with the JSON-RPC code and the
HTTP status of the error's class (:attr:`agentd.errors.RpcError.http_status`).

``session/prompt`` answers when the run ends, like over JSON-RPC; a client that goes away
meanwhile does not stop the run (``session/cancel`` does). Event streams are not methods here:
see ``GET /api/events`` in :mod:`agentd.web.server`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from agentd.api.contract import refuse_local_only
from agentd.errors import InvalidParams, MethodNotFound, RpcError
from agentd.protocol.table import METHODS

if TYPE_CHECKING:
    from agentd.session.service import SessionService

_encode = msgspec.json.Encoder().encode


async def call(service: SessionService, method: str, body: bytes) -> bytes:
    """Run ``method`` with the JSON ``body``; the encoded result. Raises RpcError."""
    spec = METHODS.get(method)
    if spec is None or spec.call is None or not spec.http:
        raise MethodNotFound(f"no API method {method!r}")
    try:
        params = msgspec.json.decode(body or b"{}", type=spec.params)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise InvalidParams(str(exc)) from None
    refuse_local_only(spec, params)
    if method == "session/prompt":  # the run outlives the request: only cancel ends it
        result: Any = await (await service.start_prompt(params)).result()
    else:
        result = await getattr(service, spec.call)(params)
    return _encode(result)


def error_body(error: RpcError) -> bytes:
    """The JSON body of an error answer."""
    return _encode({"error": {"code": error.code, "message": error.message}})
