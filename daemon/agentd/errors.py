"""The exception tree and JSON-RPC error codes.

::

    Exception
    ├── RpcError(code, message, data)      JSON-RPC failures, one subclass per code
    │   ├── ParseError          -32700  frame is not JSON
    │   ├── InvalidRequest      -32600  not a JSON-RPC 2.0 request (also: batch arrays)
    │   ├── MethodNotFound      -32601  unknown method
    │   ├── InvalidParams       -32602  params fail validation (msgspec's path message)
    │   ├── InternalError       -32603  anything unexpected (traceback only in the log)
    │   ├── RequestCancelled    -32800  $/cancelRequest or the peer went away
    │   ├── Unauthorized        -32001  TCP token missing or wrong
    │   ├── SessionBusy         -32002  prompt while a run is in progress
    │   ├── SessionNotFound     -32003  no such session (loaded or on disk)
    │   ├── NotInitialized      -32004  a call before ``initialize``
    │   ├── ConfigError         -32005  provider/model not configured or unusable
    │   ├── SessionExists       -32006  caller-chosen session id already used
    │   ├── PeerTimeout         -32007  a server->client request got no answer in time
    │   ├── ConnectionLost      -32008  the peer disconnected while a request was pending
    │   ├── SessionIdle         -32009  steer/follow-up while no run is in progress
    │   ├── SessionLocked       -32010  another process has the session file loaded
    │   ├── StoreWriteFailed    -32011  the session file could not be written (disk full)
    │   └── StoreReadFailed     -32012  a loaded session's entry no longer reads back from its file
    └── tools.base.ToolError                tool failures, shown to the model as error results

Provider failures are not exceptions: providers end their stream with an error message.
"""

from __future__ import annotations

from typing import Any, ClassVar


class RpcError(Exception):
    """A JSON-RPC error response. ``message`` is safe to show to clients.

    ``http_status`` is the status the web API answers this error with (the same class, the
    same status on every route; 500 unless a subclass says otherwise).
    """

    code: ClassVar[int] = -32603
    http_status: ClassVar[int] = 500

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class ParseError(RpcError):
    code = -32700
    http_status = 400


class InvalidRequest(RpcError):
    code = -32600
    http_status = 400


class MethodNotFound(RpcError):
    code = -32601
    http_status = 404


class InvalidParams(RpcError):
    code = -32602
    http_status = 400


class InternalError(RpcError):
    code = -32603


class RequestCancelled(RpcError):
    code = -32800


class Unauthorized(RpcError):
    code = -32001
    http_status = 401


class SessionBusy(RpcError):
    code = -32002
    http_status = 409


class SessionNotFound(RpcError):
    code = -32003
    http_status = 404


class NotInitialized(RpcError):
    code = -32004


class ConfigError(RpcError):
    code = -32005
    http_status = 400


class SessionExists(RpcError):
    code = -32006
    http_status = 409


class PeerTimeout(RpcError):
    code = -32007


class ConnectionLost(RpcError):
    code = -32008


class SessionIdle(RpcError):
    code = -32009
    http_status = 409


class SessionLocked(RpcError):
    """Another process (``data.pid``, when known) holds the lock of the session file."""

    code = -32010
    http_status = 409


class StoreWriteFailed(RpcError):
    """Writing the session file failed; the file was cut back to its last complete entry."""

    code = -32011


class StoreReadFailed(RpcError):
    """An entry of a loaded session no longer reads back from its file (it was changed).

    ``data`` names the path, the entry and the byte offset."""

    code = -32012


ERROR_CLASSES: tuple[type[RpcError], ...] = (
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    InternalError,
    RequestCancelled,
    Unauthorized,
    SessionBusy,
    SessionNotFound,
    NotInitialized,
    ConfigError,
    SessionExists,
    PeerTimeout,
    ConnectionLost,
    SessionIdle,
    SessionLocked,
    StoreWriteFailed,
    StoreReadFailed,
)
"""Every code, for the protocol document and for clients mapping codes back to classes."""
