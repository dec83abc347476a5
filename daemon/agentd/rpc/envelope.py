"""JSON-RPC 2.0 envelopes: classify incoming frames, build outgoing messages.

Incoming frames decode into one lax :class:`_Inbound` Struct whose ``params``, ``result`` and
``error`` stay :class:`msgspec.Raw`, so each handler decodes its own params type. :func:`parse`
turns a frame into exactly one of :class:`Request`, :class:`Notification`, :class:`Response` or
:class:`Invalid` (which carries the error to answer and the id to answer it with).

Outgoing messages are separate Structs. :class:`ResultMessage` deliberately has no
``omit_defaults``: ``"result": null`` is always written, as JSON-RPC requires.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from agentd.errors import ERROR_CLASSES, InvalidRequest, ParseError, RpcError

Id = int | float | str | None
"""A request id as JSON-RPC allows it: number, string or null."""

_NO_RAW = msgspec.Raw()


class _Inbound(msgspec.Struct):
    jsonrpc: Any = UNSET
    id: Any = UNSET
    method: Any = UNSET
    params: msgspec.Raw = _NO_RAW
    result: msgspec.Raw = _NO_RAW
    error: msgspec.Raw = _NO_RAW


class ErrorObject(msgspec.Struct, omit_defaults=True):
    """The ``error`` member of an error response."""

    code: int
    message: str
    data: Any = None


class Request(msgspec.Struct, frozen=True):
    """A call that expects one response. ``params`` is empty when absent or null."""

    id: Id
    method: str
    params: msgspec.Raw


class Notification(msgspec.Struct, frozen=True):
    """A call without an id: never answered."""

    method: str
    params: msgspec.Raw


class Response(msgspec.Struct, frozen=True):
    """An answer to one of our requests: ``error`` is set, or else ``result``."""

    id: Id
    result: msgspec.Raw
    error: ErrorObject | None


class Invalid(msgspec.Struct, frozen=True):
    """A frame that is not a valid message: answer ``error`` with ``id`` (often null)."""

    id: Id
    error: RpcError


Inbound = Request | Notification | Response | Invalid

_decode_inbound = msgspec.json.Decoder(_Inbound).decode
_decode_error = msgspec.json.Decoder(ErrorObject).decode


def has_value(raw: msgspec.Raw) -> bool:
    """True when a Raw member was present and not ``null``."""
    return len(raw) > 0 and bytes(raw) != b"null"


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, int | float | str) and not isinstance(value, bool))


def parse(frame: bytes) -> Inbound:
    """Classify one frame. Never raises: problems come back as :class:`Invalid`."""
    try:
        msg = _decode_inbound(frame)
    except msgspec.ValidationError:
        if frame.lstrip()[:1] == b"[":
            return Invalid(None, InvalidRequest("batch requests are not supported"))
        return Invalid(None, InvalidRequest("a JSON-RPC message must be a JSON object"))
    except (msgspec.DecodeError, RecursionError, ValueError) as exc:
        return Invalid(None, ParseError(f"invalid JSON: {exc}"))
    msg_id = msg.id
    if msg_id is not UNSET and not _valid_id(msg_id):
        return Invalid(None, InvalidRequest("`id` must be a number, a string or null"))
    reply_id: Id = None if msg_id is UNSET else msg_id
    if msg.jsonrpc != "2.0":
        return Invalid(reply_id, InvalidRequest('`jsonrpc` must be exactly "2.0"'))
    if msg.method is not UNSET:
        if not isinstance(msg.method, str):
            return Invalid(reply_id, InvalidRequest("`method` must be a string"))
        if msg_id is UNSET:
            return Notification(msg.method, msg.params)
        return Request(reply_id, msg.method, msg.params)
    if msg_id is not UNSET and (len(msg.result) or len(msg.error)):
        return _response(reply_id, msg)
    return Invalid(reply_id, InvalidRequest("a message needs `method`, or `result` or `error`"))


def _response(msg_id: Id, msg: _Inbound) -> Response:
    if not len(msg.error):
        return Response(msg_id, msg.result, None)
    try:
        return Response(msg_id, _NO_RAW, _decode_error(msg.error))
    except msgspec.DecodeError as exc:
        return Response(msg_id, _NO_RAW, ErrorObject(-32603, f"malformed error object: {exc}"))


# --- outgoing ---------------------------------------------------------------------------


class RequestMessage(msgspec.Struct, kw_only=True):
    """An outgoing request. ``params`` is omitted when UNSET."""

    jsonrpc: str = "2.0"
    id: Id
    method: str
    params: Any = UNSET


class NotificationMessage(msgspec.Struct, kw_only=True):
    """An outgoing notification. ``params`` is omitted when UNSET."""

    jsonrpc: str = "2.0"
    method: str
    params: Any = UNSET


class ResultMessage(msgspec.Struct, kw_only=True):
    """A success response; ``result`` is written even when null."""

    jsonrpc: str = "2.0"
    id: Id
    result: Any


class ErrorMessage(msgspec.Struct, kw_only=True):
    """An error response."""

    jsonrpc: str = "2.0"
    id: Id
    error: ErrorObject


def error_message(msg_id: Id, error: RpcError) -> ErrorMessage:
    """The error response for ``error`` (its code, message and data) to request ``msg_id``."""
    return ErrorMessage(id=msg_id, error=ErrorObject(error.code, error.message, error.data))


def optional_params(params: Any) -> Any:
    """``params`` for an outgoing message: None becomes UNSET (the member is left out)."""
    return UNSET if params is None else params


_ERRORS_BY_CODE: dict[int, type[RpcError]] = {cls.code: cls for cls in ERROR_CLASSES}


def to_exception(error: ErrorObject) -> RpcError:
    """The :class:`RpcError` subclass for a received error (a new subclass for unknown codes)."""
    cls = _ERRORS_BY_CODE.get(error.code)
    if cls is None:
        cls = type(f"RpcError{error.code}".replace("-", "_"), (RpcError,), {"code": error.code})
        _ERRORS_BY_CODE[error.code] = cls
    return cls(error.message, error.data)


_result_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


def decode_result(method: str, raw: msgspec.Raw, result_type: Any) -> Any:
    """A received ``result`` as ``result_type``; InvalidRequest if it does not match."""
    decoder = _result_decoders.get(result_type)
    if decoder is None:
        decoder = _result_decoders[result_type] = msgspec.json.Decoder(result_type)
    try:
        return decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError, ValueError) as exc:
        raise InvalidRequest(f"malformed result of {method}: {exc}") from None


class _CancelParams(msgspec.Struct):
    id: int | float | str | None


class _CancelRequestParams(msgspec.Struct, rename="camel"):
    request_id: int | float | str | None


def cancel_target(raw: msgspec.Raw, key: str = "id") -> Id | UnsetType:
    """The request id named by cancel params: ``{"id"}`` (``$/cancelRequest``) or, with
    ``key="requestId"``, ``{"requestId"}`` (ACP's ``$/cancel_request``); UNSET when malformed."""
    try:
        if key == "requestId":
            return msgspec.json.decode(raw, type=_CancelRequestParams).request_id
        return msgspec.json.decode(raw, type=_CancelParams).id
    except (msgspec.DecodeError, RecursionError, ValueError):
        return UNSET
