"""Client-side helpers: open a stream and return a started :class:`Connection`.

Clients choose their framing explicitly (``ndjson`` unless told otherwise); the daemon detects
it. Each helper starts the connection's read loop; call ``await connection.close()`` to end.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentd import paths
from agentd.rpc.connection import Connection
from agentd.rpc.router import Router


def open_connection(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    router: Router | None = None,
    *,
    framing: str = "ndjson",
    **options: Any,
) -> Connection:
    """A started client :class:`Connection` over an already open stream pair."""
    connection = Connection(reader, writer, router or Router(), framing=framing, **options)
    connection.start()
    return connection


async def open_private_unix(
    path: str | Path, **kwargs: Any
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """``asyncio.open_unix_connection`` to a daemon of this user only.

    Before connecting, the socket's folder must be this user's and private; once connected,
    the peer must run as this user (``SO_PEERCRED``), checked before a byte is sent. Raises
    :class:`agentd.paths.UnsafeSocketError` (a ``PermissionError``) otherwise, and OSError
    (e.g. FileNotFoundError) when nobody listens.
    """
    paths.check_socket_folder(path)
    reader, writer = await asyncio.open_unix_connection(str(path), **kwargs)
    try:
        paths.check_socket_peer(writer.get_extra_info("socket"), path)
    except paths.UnsafeSocketError:
        writer.transport.abort()
        raise
    return reader, writer


async def connect_unix(
    path: str | Path, router: Router | None = None, *, framing: str = "ndjson", **options: Any
) -> Connection:
    """Connect to a Unix socket through :func:`open_private_unix` (same errors)."""
    reader, writer = await open_private_unix(path)
    options.setdefault("name", f"unix:{path}")
    options.setdefault("transport", "socket")
    return open_connection(reader, writer, router, framing=framing, **options)


async def connect_tcp(
    host: str, port: int, router: Router | None = None, *, framing: str = "ndjson", **options: Any
) -> Connection:
    """Connect over TCP (the daemon then requires ``initialize`` with its token)."""
    reader, writer = await asyncio.open_connection(host, port)
    options.setdefault("name", f"tcp:{host}:{port}")
    options.setdefault("transport", "tcp")
    return open_connection(reader, writer, router, framing=framing, **options)
