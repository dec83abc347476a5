"""The outbound queue: slow readers are dropped, fast ones and bursts are not."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from agentd.rpc import Connection, Router
from tests.harness import scaled
from tests.rpc.helpers import connection_pair

PAYLOAD = {"text": "x" * 1024}


async def _stalled_server(**options: Any) -> tuple[Connection, socket.socket]:
    """A server Connection whose peer never reads (the peer socket is returned to keep it open)."""
    server_sock, peer_sock = socket.socketpair()
    peer_sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader, writer = await asyncio.open_unix_connection(sock=server_sock)
    server = Connection(reader, writer, Router(), name="stalled", **options)
    server.start()
    return server, peer_sock


async def test_client_that_stops_reading_is_dropped_without_stalling_another() -> None:
    """After the grace period the stalled connection closes; a reading client gets everything."""
    stalled, peer_sock = await _stalled_server(queue_limit=50, stall_timeout=0.3)
    received = asyncio.Event()
    count = 0

    def on_tick(conn: Connection, params: Any) -> None:
        nonlocal count
        count += 1
        if count == 2000:
            received.set()

    client_router = Router()
    client_router.on_notification("tick", on_tick)
    try:
        async with connection_pair(Router(), client_router) as (server, _client):
            sent = 0
            async with asyncio.timeout(scaled(30)):  # 2,000 paced sends on a loaded machine
                while not stalled.closed or sent < 2000:
                    stalled.notify("tick", PAYLOAD)
                    if sent < 2000:
                        server.notify("tick", PAYLOAD)
                        sent += 1
                    await asyncio.sleep(0.0005)  # paced sending: the load under test
                await received.wait()
            assert stalled.closed
            assert not server.closed
    finally:
        peer_sock.close()


async def test_a_burst_handed_to_the_transport_still_counts_for_a_peer_that_never_reads() -> None:
    """Frames put in one loop step move to the transport in one batch, emptying the queue; a
    peer that never takes them is still dropped when the grace period ends."""
    stalled, peer_sock = await _stalled_server(queue_limit=50, stall_timeout=0.3)
    try:
        for seq in range(500):
            stalled.notify("tick", {"seq": seq, **PAYLOAD})
        async with asyncio.timeout(scaled(20)):
            while not stalled.closed:
                await asyncio.sleep(0.02)
    finally:
        peer_sock.close()


async def test_queue_that_recovers_within_the_grace_period_is_kept() -> None:
    """A burst far above the frame bound is fine when the reader catches up in time; frames
    written at once, coalesced within a loop step and queued all arrive in order."""
    total = 30_000
    done = asyncio.Event()
    seen: list[int] = []

    def on_tick(conn: Connection, params: Any) -> None:
        seen.append(params["seq"])
        if len(seen) == total:
            done.set()

    client_router = Router()
    client_router.on_notification("tick", on_tick)
    async with connection_pair(Router(), client_router, queue_limit=100, stall_timeout=5.0) as (
        server,
        _client,
    ):
        for seq in range(total):
            server.notify("tick", {"seq": seq})
        async with asyncio.timeout(scaled(20)):
            await done.wait()
        assert seen == list(range(total))
        assert not server.closed


async def test_byte_bound_drops_a_flooding_connection_at_once() -> None:
    """Twice the byte bound queued closes the connection without waiting for the grace period."""
    stalled, peer_sock = await _stalled_server(queue_bytes=64 * 1024, stall_timeout=60.0)
    try:
        async with asyncio.timeout(scaled(10)):
            while not stalled.closed:
                for _ in range(64):
                    stalled.notify("tick", PAYLOAD)
                await asyncio.sleep(0)
        assert stalled.closed
    finally:
        peer_sock.close()


async def test_drained_waits_for_a_stalled_peer_and_returns_once_it_reads() -> None:
    """A producer pacing itself with ``drained()`` never queues more than its own sends: while
    the peer reads nothing it waits (the queue stays within one batch), and once the peer
    reads everything it returns; on a closed connection it returns at once."""
    stalled, peer_sock = await _stalled_server(queue_limit=50, stall_timeout=60.0)
    try:
        sent = 0
        async with asyncio.timeout(scaled(10)):  # fill the socket and the transport's buffer
            while True:
                for _ in range(16):
                    stalled.notify("tick", PAYLOAD)
                    sent += 1
                waiting = asyncio.ensure_future(stalled.drained())
                done, _ = await asyncio.wait({waiting}, timeout=0.2)
                if not done:
                    break
        assert not stalled.closed
        assert stalled._outbox.queued <= 16
        received = 0
        peer_sock.setblocking(False)

        async def read_all() -> None:
            nonlocal received
            loop = asyncio.get_running_loop()
            while received < sent:
                received += (await loop.sock_recv(peer_sock, 1 << 16)).count(b"\n")

        async with asyncio.timeout(scaled(10)):
            await asyncio.gather(read_all(), waiting)
        assert waiting.done()
        assert not stalled.closed
    finally:
        peer_sock.close()
    await stalled.close()
    async with asyncio.timeout(scaled(5)):
        await stalled.drained()
