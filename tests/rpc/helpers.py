"""In-process test helpers: connection pairs over real socket pairs, and a raw byte peer."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from agentd.rpc import Connection, Router
from agentd.rpc.framing import CONTENT_LENGTH, NDJSON, encode_frame
from tests.harness import scaled


@asynccontextmanager
async def connection_pair(
    server_router: Router,
    client_router: Router | None = None,
    *,
    framing: str = NDJSON,
    **server_options: Any,
) -> AsyncIterator[tuple[Connection, Connection]]:
    """A started server Connection (auto-detecting) and client Connection over a socket pair."""
    server_sock, client_sock = socket.socketpair()
    reader, writer = await asyncio.open_unix_connection(sock=server_sock)
    server = Connection(reader, writer, server_router, name="server", **server_options)
    server.start()
    reader, writer = await asyncio.open_unix_connection(sock=client_sock)
    client = Connection(reader, writer, client_router or Router(), name="client", framing=framing)
    client.start()
    try:
        yield server, client
    finally:
        await client.close()
        await server.close()


class RawPeer:
    """Speaks bytes to a Connection: send anything, read back parsed frames."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.framing = NDJSON

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def send_json(self, message: Any, framing: str | None = None) -> None:
        body = json.dumps(message).encode()
        await self.send(encode_frame(body, framing or self.framing))  # type: ignore[arg-type]

    async def read_raw(self, timeout: float = 5.0) -> bytes:
        """The next frame body, in the peer's framing (ndjson unless set otherwise)."""
        async with asyncio.timeout(scaled(timeout)):
            if self.framing == CONTENT_LENGTH:
                header = await self.reader.readuntil(b"\r\n\r\n")
                length = int(header.split(b":")[1].split(b"\r\n")[0])
                return await self.reader.readexactly(length)
            line = await self.reader.readline()
            if not line:
                raise EOFError("the connection closed")
            return line.rstrip(b"\n")

    async def read(self, timeout: float = 5.0) -> Any:
        return json.loads(await self.read_raw(timeout))

    async def read_until_id(self, request_id: Any, timeout: float = 5.0) -> Any:
        """Skip other frames until the response to ``request_id``."""
        while True:
            message = await self.read(timeout)
            if message.get("id") == request_id and "method" not in message:
                return message

    async def at_eof(self, timeout: float = 5.0) -> bool:
        async with asyncio.timeout(scaled(timeout)):
            return await self.reader.read(1) == b""


@asynccontextmanager
async def raw_pair(
    router: Router, **server_options: Any
) -> AsyncIterator[tuple[Connection, RawPeer]]:
    """A started server Connection and a :class:`RawPeer` talking to it."""
    server_sock, peer_sock = socket.socketpair()
    reader, writer = await asyncio.open_unix_connection(sock=server_sock)
    server = Connection(reader, writer, router, name="server", **server_options)
    server.start()
    peer_reader, peer_writer = await asyncio.open_unix_connection(sock=peer_sock)
    peer = RawPeer(peer_reader, peer_writer)
    try:
        yield server, peer
    finally:
        peer_writer.close()
        await server.close()
