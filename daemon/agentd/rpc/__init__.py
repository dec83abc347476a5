"""JSON-RPC 2.0 over byte streams: :class:`Connection`, :class:`Router` and helpers (each
imported from its module on first use).

Imports only the standard library, msgspec, :mod:`agentd.errors`, :mod:`agentd.paths` and
:mod:`agentd.protocol` (no structlog, no httpx), so clients can use it with a fast start.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentd.rpc.connect import connect_tcp, connect_unix, open_connection, open_private_unix
    from agentd.rpc.connection import CANCEL_METHOD, Connection
    from agentd.rpc.framing import CONTENT_LENGTH, MAX_FRAME_BYTES, NDJSON, Framing
    from agentd.rpc.outbox import QUEUE_BYTES, QUEUE_FRAMES, STALL_TIMEOUT
    from agentd.rpc.router import Guard, Handler, NotificationHandler, Router

_HOMES = {
    **dict.fromkeys(("connect_tcp", "connect_unix", "open_connection", "open_private_unix"),
                    "agentd.rpc.connect"),
    **dict.fromkeys(("CANCEL_METHOD", "Connection"), "agentd.rpc.connection"),
    **dict.fromkeys(("CONTENT_LENGTH", "MAX_FRAME_BYTES", "NDJSON", "Framing"),
                    "agentd.rpc.framing"),
    **dict.fromkeys(("QUEUE_BYTES", "QUEUE_FRAMES", "STALL_TIMEOUT"), "agentd.rpc.outbox"),
    **dict.fromkeys(("Guard", "Handler", "NotificationHandler", "Router"), "agentd.rpc.router"),
}  # fmt: skip

__all__ = [
    "CANCEL_METHOD",
    "CONTENT_LENGTH",
    "MAX_FRAME_BYTES",
    "NDJSON",
    "QUEUE_BYTES",
    "QUEUE_FRAMES",
    "STALL_TIMEOUT",
    "Connection",
    "Framing",
    "Guard",
    "Handler",
    "NotificationHandler",
    "Router",
    "connect_tcp",
    "connect_unix",
    "open_connection",
    "open_private_unix",
]


def __getattr__(name: str) -> Any:
    """The names above, each imported from its module on first use: a process that only
    logs (``agentd.log`` reads :mod:`agentd.rpc.context`) or runs its sessions in-process
    never loads the connection machinery."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentd.rpc' has no attribute {name!r}")
    return getattr(import_module(home), name)
