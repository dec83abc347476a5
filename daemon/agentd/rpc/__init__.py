"""JSON-RPC 2.0 over byte streams: :class:`Connection`, :class:`Router` and helpers.

Imports only the standard library, msgspec, :mod:`agentd.errors`, :mod:`agentd.paths` and
:mod:`agentd.protocol` (no structlog, no httpx), so clients can use it with a fast start.
"""

from __future__ import annotations

from agentd.rpc.connect import connect_tcp, connect_unix, open_connection, open_private_unix
from agentd.rpc.connection import CANCEL_METHOD, Connection
from agentd.rpc.framing import CONTENT_LENGTH, MAX_FRAME_BYTES, NDJSON, Framing
from agentd.rpc.outbox import QUEUE_BYTES, QUEUE_FRAMES, STALL_TIMEOUT
from agentd.rpc.router import Guard, Handler, NotificationHandler, Router

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
