"""N Server-Sent-Events readers of one session, in their own process (used by bench_web).

    python sse_clients.py BASE_URL COOKIE SESSION_ID N  < TICKETS

The N one-time event-stream tickets come on stdin, one a line. Prints ``ready`` once every
stream has its ``subscribed`` event, then, when every stream has seen ``agent_end``, one JSON
object: ``{client index: [[seq, CLOCK_MONOTONIC arrival], …]}``.
"""

from __future__ import annotations

import json
import selectors
import socket
import sys
import time
from urllib.parse import urlsplit


def main() -> None:
    base, cookie, session_id, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    tickets = [sys.stdin.readline().strip() for _ in range(count)]
    url = urlsplit(base)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    selector = selectors.DefaultSelector()
    buffers: dict[int, bytes] = {}
    arrivals: dict[int, list[list[float]]] = {}
    subscribed: set[int] = set()
    ended: set[int] = set()
    for index in range(count):
        conn = socket.create_connection((host, port))
        conn.sendall(
            f"GET /api/events?sessionId={session_id}&ticket={tickets[index]} HTTP/1.1\r\n"
            f"Host: {url.netloc}\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        conn.setblocking(False)
        selector.register(conn, selectors.EVENT_READ, index)
        buffers[index], arrivals[index] = b"", []
    ready = False
    while len(ended) < count:
        for key, _ in selector.select(timeout=60):
            index = key.data
            data = key.fileobj.recv(1 << 16)  # type: ignore[union-attr]
            now = time.monotonic()
            if not data:
                ended.add(index)
                selector.unregister(key.fileobj)
                continue
            *messages, buffers[index] = (buffers[index] + data).split(b"\n\n")
            for message in messages:
                if b"event: subscribed" in message:
                    subscribed.add(index)
                for line in message.split(b"\n"):
                    if line.startswith(b"id: "):
                        arrivals[index].append([int(line[4:]), now])
                if b'"agent_end"' in message:
                    ended.add(index)
        if not ready and len(subscribed) == count:
            ready = True
            print("ready", flush=True)
    print(json.dumps(arrivals))


if __name__ == "__main__":
    main()
