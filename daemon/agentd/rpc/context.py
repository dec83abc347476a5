"""Per-connection and per-request logging context, kept in :mod:`contextvars`.

:class:`~agentd.rpc.connection.Connection` sets :data:`conn_id` in its read loop and
:data:`request_id` in each handler task; tasks inherit a copy of the context, so every log line
written while serving a request carries both. :func:`agentd.log.configure` adds them to every
structlog and stdlib log record. Kept free of structlog so clients can import ``agentd.rpc``
cheaply.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

conn_id: ContextVar[int | None] = ContextVar("agentd_conn_id", default=None)
request_id: ContextVar[Any] = ContextVar("agentd_request_id", default=None)


def current() -> dict[str, Any]:
    """The context values that are set, as log fields (``conn_id``, ``request_id``)."""
    fields: dict[str, Any] = {}
    if (conn := conn_id.get()) is not None:
        fields["conn_id"] = conn
    if (request := request_id.get()) is not None:
        fields["request_id"] = request
    return fields
