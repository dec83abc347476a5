"""Who may use the HTTP front-end: Host, token/cookie and Origin checks.

* **Host** (DNS rebinding): the ``Host`` header must name the bound address (for a loopback
  bind also ``localhost``, ``127.0.0.1`` and ``[::1]``) with the bound port; otherwise 403.
* **Token**: every URL the daemon hands out (printed at start, or from ``daemon/web``) carries
  a one-time token, valid for :data:`LINK_TTL` seconds. ``GET /?token=…`` exchanges it for a
  random session secret in an ``HttpOnly; SameSite=Strict`` cookie named after the port (cookies
  are not port-scoped, so two daemons on one host keep theirs apart). Everything else needs
  that cookie; without it: 401.
* **Origin** (CSRF): a request that changes state (any method but GET/HEAD) must carry an
  ``Origin`` equal to the page's own; a ``Sec-Fetch-Site`` other than ``same-origin`` is
  refused too; otherwise 403. No CORS headers are ever sent.

Secrets live in memory only: a restarted daemon hands out new links.
"""

from __future__ import annotations

import hmac
import secrets
import socket
import time
from dataclasses import dataclass, field

from agentd.web.http import Request

LINK_TTL = 600.0
SAFE_METHODS = frozenset({"GET", "HEAD"})
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class Refused(Exception):
    """The request is not allowed: answer ``status`` (401 or 403) with ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Gate:
    """The checks for one bound address (see the module docstring)."""

    host: str
    port: int
    loopback: bool
    links: dict[str, float] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        names = {_bracket(self.host)}
        if self.loopback:
            names.update(LOOPBACK_NAMES)
        if self.host in ("0.0.0.0", "::", ""):
            names.update({socket.gethostname(), socket.getfqdn(), *LOOPBACK_NAMES})
        self.hosts = {f"{name}:{self.port}".lower() for name in names}
        if self.port == 80:
            self.hosts.update(name.lower() for name in names)

    @property
    def cookie_name(self) -> str:
        return f"agentd_{self.port}"

    @property
    def origin(self) -> str:
        """The page's own origin, as the URLs handed out name it."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else _bracket(self.host)
        return f"http://{host}:{self.port}"

    # --- links and cookies -----------------------------------------------------------------

    def mint_link(self, query: str = "") -> str:
        """A URL of the page carrying a new one-time token (and ``query``, e.g. ``cwd=…``)."""
        now = time.monotonic()
        for token, born in list(self.links.items()):
            if now - born > LINK_TTL:
                del self.links[token]
        token = secrets.token_urlsafe(24)
        self.links[token] = now
        return f"{self.origin}/?token={token}" + (f"&{query}" if query else "")

    def exchange(self, token: str) -> str | None:
        """A new cookie secret for a valid one-time ``token`` (used up); None otherwise."""
        for known, born in list(self.links.items()):
            if hmac.compare_digest(known, token):
                del self.links[known]
                if time.monotonic() - born > LINK_TTL:
                    return None
                secret = secrets.token_urlsafe(32)
                self.secrets.add(secret)
                return secret
        return None

    def set_cookie(self, secret: str) -> str:
        """The ``Set-Cookie`` value carrying ``secret``."""
        return f"{self.cookie_name}={secret}; Path=/; HttpOnly; SameSite=Strict"

    # --- checks ----------------------------------------------------------------------------

    def check_host(self, request: Request) -> None:
        """403 unless the Host header names this server."""
        if request.headers.get("host", "").lower() not in self.hosts:
            raise Refused(403, "this server does not answer to that Host name")

    def check_cookie(self, request: Request) -> None:
        """401 unless the request carries a valid session cookie."""
        value = request.cookies.get(self.cookie_name, "")
        if not value or not any(hmac.compare_digest(value, s) for s in self.secrets):
            raise Refused(
                401, "not authorised: open the link printed by agentd or run `agentctl web`"
            )

    def check_origin(self, request: Request) -> None:
        """403 for a state-changing request from another origin (or from no stated origin)."""
        if request.method in SAFE_METHODS:
            return
        origin = request.headers.get("origin", "")
        host = request.headers.get("host", "").lower()
        if not origin or origin.lower() != f"http://{host}":
            raise Refused(403, "cross-origin request refused")
        site = request.headers.get("sec-fetch-site")
        if site is not None and site != "same-origin":
            raise Refused(403, "cross-site request refused")


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
