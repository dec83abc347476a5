"""Signing in and out of the web chat: the answers to ``GET /?token=``, ``POST /api/ticket``
and ``POST /api/signout`` (the checks themselves are :mod:`agentd.web.security`'s).

The sign-in answer is a small page, not a redirect: it sets the cookie and sends the browser
on to ``/#key=K`` with a ``<meta http-equiv="refresh">``. A redirect would not do: a link opened
from a file (``agentctl web`` opens a private redirect file, so no token is ever on a command
line) is a cross-site navigation, and a browser does not send a ``SameSite=Strict`` cookie along
a redirect chain that began cross-site; a navigation started by the page itself is same-site.
The page key travels in the URL's fragment, which never leaves the browser; the page's script
moves it to ``sessionStorage`` and removes it from the address bar.
"""

from __future__ import annotations

from html import escape
from urllib.parse import urlencode

import msgspec

from agentd.protocol.methods import OkResult
from agentd.protocol.web import WebTicket
from agentd.web.http import JSON, TEXT, Request, error_response, response
from agentd.web.logins import SignIn
from agentd.web.security import Gate

SIGN_IN_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
_encode = msgspec.json.Encoder().encode


def exchange(gate: Gate, request: Request) -> bytes:
    """The answer to ``GET /?token=T[&cwd=…]``: the sign-in page with the cookie, or 401 for a
    used or expired token (a 303 to the page when the browser is signed in already)."""
    rest = {k: v for k, v in request.query.items() if k != "token"}
    target = "/" + (f"?{urlencode(rest)}" if rest else "")
    new = gate.logins.exchange(request.query["token"])
    if new is None:
        if gate.logins.by_cookie(request.cookies.get(gate.cookie_name, "")) is not None:
            return response(303, [("Location", target), *TEXT])  # an old link opened again
        return error_response(
            401, "this link was used already or has expired: run `agentctl web`", json=False
        )
    url = escape(f"{target}#key={new.key}")
    page = (
        '<!doctype html><meta charset="utf-8"><title>agentd</title>'
        f'<meta http-equiv="refresh" content="0;url={url}">'
        f'<p>Signing in… <a href="{url}">continue</a></p>\n'
    )
    headers = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Set-Cookie", gate.set_cookie(new.cookie)),
        ("Content-Security-Policy", SIGN_IN_CSP),
        *TEXT[1:],
    ]
    return response(200, headers, page.encode())


def ticket(gate: Gate, sign_in: SignIn) -> bytes:
    """``POST /api/ticket``: a one-time event-stream ticket for this page."""
    return response(200, JSON, _encode(WebTicket(ticket=gate.logins.mint_ticket(sign_in))))


def sign_out(gate: Gate) -> bytes:
    """``POST /api/signout``: end every sign-in (the caller closes their event streams) and
    clear this browser's cookie."""
    gate.logins.end_all()
    headers = [*JSON, ("Set-Cookie", gate.set_cookie(""))]
    return response(200, headers, _encode(OkResult(ok=True)))
