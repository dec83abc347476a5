"""The web front-end's credentials: one-time links, sign-ins (cookie + page key), stream tickets.

* A **link** carries a one-time token, good for :data:`LINK_TTL` seconds. Exchanging it creates
  a **sign-in**: a random cookie secret (sent by the browser with every request, to every port
  of the host: cookies are not port-scoped) and a random **page key** that only the page's
  script holds (``sessionStorage``, never a cookie) and sends in the ``X-Agentd-Key`` header.
* A **ticket** is a one-time credential for one event stream (an ``EventSource`` cannot send
  headers), minted by a request carrying a page key, good for :data:`TICKET_TTL` seconds.
* A sign-in ends :data:`SIGN_IN_IDLE` seconds after its last use (an open event stream counts
  as use), :data:`SIGN_IN_MAX` seconds after it began, or at a sign-out, which ends them all.

Secrets are stored as SHA-256 digests in dicts: one lookup per check whatever their number,
and no secret is compared byte by byte. Every table is bounded (the oldest entry goes) and
pruned of expired entries as it is used, so nothing accumulates. Nothing is written to disk:
a restarted daemon hands out new links.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

LINK_TTL = 600.0
"""Seconds a one-time link stays valid."""
TICKET_TTL = 30.0
"""Seconds an event-stream ticket stays valid."""
SIGN_IN_IDLE = 2 * 3600.0
"""Seconds a sign-in survives without a request or an open event stream."""
SIGN_IN_MAX = 12 * 3600.0
"""Seconds a sign-in lasts at most."""
MAX_LINKS = 32
MAX_SIGN_INS = 32
MAX_TICKETS = 64


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).digest()


@dataclass(eq=False)
class SignIn:
    """One exchanged link: a browser page's cookie and key, alive until it ends."""

    cookie: bytes
    key: bytes
    born: float
    used: float
    ended: bool = False

    def alive(self, now: float) -> bool:
        return not self.ended and now - self.used < SIGN_IN_IDLE and now - self.born < SIGN_IN_MAX


@dataclass(eq=False)
class Ticket:
    sign_in: SignIn
    born: float


@dataclass
class NewSignIn:
    """The secrets of a new sign-in, handed to the browser once."""

    cookie: str
    key: str
    sign_in: SignIn


@dataclass
class Logins:
    """Every credential of one web front-end (see the module docstring); ``clock`` gives the
    time in seconds (monotonic)."""

    clock: Callable[[], float] = time.monotonic
    links: dict[bytes, float] = field(default_factory=dict)
    cookies: dict[bytes, SignIn] = field(default_factory=dict)
    keys: dict[bytes, SignIn] = field(default_factory=dict)
    tickets: dict[bytes, Ticket] = field(default_factory=dict)

    def mint_link_token(self) -> str:
        """A new one-time token (the oldest unused one is dropped past :data:`MAX_LINKS`)."""
        self.prune()
        token = secrets.token_urlsafe(24)
        self.links[_digest(token)] = self.clock()
        _trim(self.links, MAX_LINKS)
        return token

    def exchange(self, token: str) -> NewSignIn | None:
        """A new sign-in for a valid one-time ``token`` (used up); None otherwise."""
        born = self.links.pop(_digest(token), None)
        now = self.clock()
        if born is None or now - born >= LINK_TTL:
            return None
        self.prune()
        while len(self.keys) >= MAX_SIGN_INS:
            self.end(min(self.keys.values(), key=lambda s: s.used))
        cookie, key = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        sign_in = SignIn(_digest(cookie), _digest(key), now, now)
        self.cookies[sign_in.cookie] = sign_in
        self.keys[sign_in.key] = sign_in
        return NewSignIn(cookie, key, sign_in)

    def by_cookie(self, cookie: str) -> SignIn | None:
        """The live sign-in of this cookie secret (its use noted), or None."""
        return self._use(self.cookies.get(_digest(cookie)) if cookie else None)

    def by_key(self, key: str) -> SignIn | None:
        """The live sign-in of this page key (its use noted), or None."""
        return self._use(self.keys.get(_digest(key)) if key else None)

    def mint_ticket(self, sign_in: SignIn) -> str:
        """A one-time event-stream ticket on behalf of ``sign_in``."""
        ticket = secrets.token_urlsafe(24)
        now = self.clock()
        for known, old in list(self.tickets.items()):
            if now - old.born >= TICKET_TTL:
                del self.tickets[known]
        self.tickets[_digest(ticket)] = Ticket(sign_in, now)
        _trim(self.tickets, MAX_TICKETS)
        return ticket

    def redeem(self, ticket: str) -> SignIn | None:
        """The live sign-in a valid ``ticket`` was minted for (the ticket is used up), or None."""
        found = self.tickets.pop(_digest(ticket), None) if ticket else None
        if found is None or self.clock() - found.born >= TICKET_TTL:
            return None
        return self._use(found.sign_in)

    def touch(self, sign_in: SignIn) -> None:
        """Note a use that is not a request (an open event stream)."""
        if sign_in.alive(self.clock()):
            sign_in.used = self.clock()

    def end(self, sign_in: SignIn) -> None:
        """End one sign-in: its cookie, key and tickets stop working."""
        sign_in.ended = True
        self.cookies.pop(sign_in.cookie, None)
        self.keys.pop(sign_in.key, None)
        for known, ticket in list(self.tickets.items()):
            if ticket.sign_in is sign_in:
                del self.tickets[known]

    def end_all(self) -> None:
        """Sign out: end every sign-in and forget every unused link and ticket."""
        for sign_in in list(self.keys.values()):
            self.end(sign_in)
        self.links.clear()
        self.tickets.clear()

    def prune(self) -> None:
        """Forget expired links, sign-ins and tickets."""
        now = self.clock()
        for token, born in list(self.links.items()):
            if now - born >= LINK_TTL:
                del self.links[token]
        for sign_in in list(self.keys.values()):
            if not sign_in.alive(now):
                self.end(sign_in)
        for known, ticket in list(self.tickets.items()):
            if now - ticket.born >= TICKET_TTL:
                del self.tickets[known]

    def _use(self, sign_in: SignIn | None) -> SignIn | None:
        now = self.clock()
        if sign_in is None or not sign_in.alive(now):
            return None
        sign_in.used = now
        return sign_in


def _trim(table: dict[bytes, Any], limit: int) -> None:
    """Drop the oldest entries (dicts keep insertion order) until ``limit`` remain."""
    while len(table) > limit:
        del table[next(iter(table))]
