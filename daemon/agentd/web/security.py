"""Who may use the HTTP front-end: Host, sign-in (cookie + page key or ticket) and Origin checks.

Every check reads only the request's head, so a refused request's body is never read.

* **Host** (DNS rebinding): the ``Host`` header must name the bound address (for a loopback
  bind also ``localhost``, ``127.0.0.1`` and ``[::1]``; for a wildcard bind any IP address, the
  host name and its FQDN) with the bound port; otherwise 403.
* **Sign-in** (:mod:`agentd.web.logins`): ``GET /?token=T`` exchanges a one-time token for a
  cookie (``HttpOnly; SameSite=Strict``, ``Secure`` under TLS, named after the port) and a
  page key. The page and its files need the cookie. Every other request needs the cookie and
  the page key in the ``X-Agentd-Key`` header (``GET /metrics`` too), except
  ``GET /api/events``, which needs the cookie and a one-time ``ticket`` query parameter.
  Cookies reach every server on the host (they are not port-scoped), so the cookie alone
  never suffices for the API: 401.
* **Origin** (CSRF): a request that changes state (any method but GET/HEAD) must carry an
  ``Origin`` equal to the page's own; a ``Sec-Fetch-Site`` other than ``same-origin`` is
  refused too; otherwise 403. No CORS headers are ever sent.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field

from agentd.web.http import Request
from agentd.web.logins import Logins, SignIn

SAFE_METHODS = frozenset({"GET", "HEAD"})
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARDS = ("0.0.0.0", "::", "")
KEY_HEADER = "x-agentd-key"
METRICS_PATH = "/metrics"
"""The Prometheus scrape: the page key as for the API (the cookie alone gets 401)."""
NOT_SIGNED_IN = "not signed in: open the link printed by agentd or run `agentctl web`"


class Refused(Exception):
    """The request is not allowed: answer ``status`` (401 or 403) with ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def is_sign_in(request: Request) -> bool:
    """``GET /?token=…``: the one request that carries no credential but the token."""
    return request.path == "/" and request.method == "GET" and "token" in request.query


@dataclass
class Gate:
    """The checks for one bound address (see the module docstring). ``public_host`` is the
    address the links name (for a wildcard bind: one other machines can reach)."""

    host: str
    port: int
    loopback: bool
    tls: bool = False
    public_host: str = ""
    logins: Logins = field(default_factory=Logins)

    def __post_init__(self) -> None:
        self.wildcard = self.host in WILDCARDS
        names = {_bracket(self.host)}
        if self.loopback:
            names.update(LOOPBACK_NAMES)
        if self.wildcard:
            names.update({socket.gethostname(), socket.getfqdn(), *LOOPBACK_NAMES})
        if not self.public_host:
            self.public_host = "127.0.0.1" if self.wildcard else self.host
        names.add(_bracket(self.public_host))
        self.hosts = {f"{name}:{self.port}".lower() for name in names}
        if self.port == (443 if self.tls else 80):
            self.hosts.update(name.lower() for name in names)
        self.scheme = "https" if self.tls else "http"

    @property
    def cookie_name(self) -> str:
        return f"agentd_{self.port}"

    @property
    def origin(self) -> str:
        """The page's origin as the links handed out name it."""
        return f"{self.scheme}://{_bracket(self.public_host)}:{self.port}"

    def mint_link(self, query: str = "") -> str:
        """A URL of the page carrying a new one-time token (and ``query``, e.g. ``cwd=…``)."""
        token = self.logins.mint_link_token()
        return f"{self.origin}/?token={token}" + (f"&{query}" if query else "")

    def set_cookie(self, secret: str) -> str:
        """The ``Set-Cookie`` value carrying ``secret`` (an empty one clears the cookie)."""
        attributes = "Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if self.tls else "")
        if not secret:
            attributes += "; Max-Age=0"
        return f"{self.cookie_name}={secret}; {attributes}"

    # --- checks ----------------------------------------------------------------------------

    def admit(self, request: Request) -> SignIn | None:
        """The sign-in a request acts for (None for the sign-in request itself); Refused
        (401/403) otherwise. Reads only the head."""
        self.check_host(request)
        if is_sign_in(request):
            return None
        logins = self.logins
        if logins.by_cookie(request.cookies.get(self.cookie_name, "")) is None:
            raise Refused(401, NOT_SIGNED_IN)
        api = (
            request.path.startswith("/api/")
            or request.path == METRICS_PATH
            or request.method not in SAFE_METHODS
        )
        if not api:
            return None  # the page and its files: the cookie is enough
        if request.path == "/api/events" and request.method == "GET":
            sign_in = logins.redeem(request.query.get("ticket", ""))
            if sign_in is None:
                raise Refused(401, "the event stream needs a fresh ticket (POST /api/ticket)")
            return sign_in
        sign_in = logins.by_key(request.headers.get(KEY_HEADER, ""))
        if sign_in is None:
            raise Refused(401, f"{NOT_SIGNED_IN} (the page key is missing, wrong or expired)")
        self.check_origin(request)
        return sign_in

    def check_host(self, request: Request) -> None:
        """403 unless the Host header names this server."""
        host = request.headers.get("host", "").lower()
        if host not in self.hosts and not (self.wildcard and self._is_ip_host(host)):
            raise Refused(403, "this server does not answer to that Host name")

    def _is_ip_host(self, host: str) -> bool:
        """An IP address literal with this server's port (a name could be rebound; an address
        literal cannot)."""
        name, colon, port = host.rpartition(":")
        if not colon or port != str(self.port):
            return False
        try:
            ipaddress.ip_address(name.removeprefix("[").removesuffix("]"))
        except ValueError:
            return False
        return True

    def check_origin(self, request: Request) -> None:
        """403 for a state-changing request from another origin (or from no stated origin)."""
        if request.method in SAFE_METHODS:
            return
        origin = request.headers.get("origin", "")
        host = request.headers.get("host", "").lower()
        if not origin or origin.lower() != f"{self.scheme}://{host}":
            raise Refused(403, "cross-origin request refused")
        site = request.headers.get("sec-fetch-site")
        if site is not None and site != "same-origin":
            raise Refused(403, "cross-site request refused")


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
