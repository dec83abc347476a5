"""The HTTP front-end's open connections: a small pre-auth pool apart from the signed-in ones.

A connection starts **pre-auth** and stays so until one of its requests is admitted with the
page key or an event-stream ticket (:mod:`agentd.web.security`). A request with only the
sign-in cookie (the page and its static files) is answered, but its connection stays pre-auth:
every server on the host receives that cookie, so a holder of the cookie alone competes in the
pre-auth pool and can never fill the signed-in places. Pre-auth connections are capped at
:data:`MAX_PREAUTH` and get :data:`HEAD_TIMEOUT` seconds to send a request head. When the pool
is full, a newcomer takes the place of the oldest pre-auth connection that is waiting for its
head (closed at once): a flood of idle connections can only push its own members out, never
keep a signed-in browser from connecting, and never hold a signed-in connection's place.
Only when every pre-auth connection is in the middle of a request is the newcomer refused.
Signed-in connections are capped separately at :data:`MAX_SIGNED_IN` (event streams included).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

MAX_PREAUTH = 64
"""Connections that have not yet had a request admitted, at most. Also the listening socket's
backlog, so one batch of accepted connections (asyncio accepts up to the backlog at a time,
before any of them is read) never pushes its own members out."""
MAX_SIGNED_IN = 256
"""Connections that have had a key- or ticket-bearing request admitted (event streams
included), at most."""
HEAD_TIMEOUT = 10.0
"""Seconds a pre-auth connection has to send a complete request head (also the TLS handshake)."""
IDLE_TIMEOUT = 60.0
"""Seconds a signed-in connection may take to send (the rest of) its next request."""


@dataclass(eq=False)
class Conn:
    """One open connection: ``waiting`` while it waits for a request head."""

    writer: asyncio.StreamWriter
    signed_in: bool = False
    waiting: bool = True

    @property
    def head_timeout(self) -> float:
        return IDLE_TIMEOUT if self.signed_in else HEAD_TIMEOUT


class Pool:
    """The open connections (see the module docstring)."""

    def __init__(self, max_preauth: int = MAX_PREAUTH, max_signed_in: int = MAX_SIGNED_IN) -> None:
        self.max_preauth = max_preauth
        self.max_signed_in = max_signed_in
        self.preauth: dict[Conn, None] = {}  # insertion order: oldest first
        self.signed_in: set[Conn] = set()

    def open(self, writer: asyncio.StreamWriter) -> Conn | None:
        """A new pre-auth connection, making room by closing the oldest waiting one; None when
        every pre-auth connection is busy with a request (refuse the newcomer)."""
        if len(self.preauth) >= self.max_preauth:
            oldest = next((conn for conn in self.preauth if conn.waiting), None)
            if oldest is None:
                return None
            self.drop(oldest)
            oldest.writer.transport.abort()
        conn = Conn(writer)
        self.preauth[conn] = None
        return conn

    def promote(self, conn: Conn) -> bool:
        """Move ``conn`` to the signed-in connections; False when they are at their cap."""
        if conn.signed_in:
            return True
        if len(self.signed_in) >= self.max_signed_in:
            return False
        self.preauth.pop(conn, None)
        self.signed_in.add(conn)
        conn.signed_in = True
        return True

    def drop(self, conn: Conn) -> None:
        """Forget ``conn`` (closed)."""
        self.preauth.pop(conn, None)
        self.signed_in.discard(conn)

    def writers(self) -> list[asyncio.StreamWriter]:
        return [conn.writer for conn in (*self.preauth, *self.signed_in)]
