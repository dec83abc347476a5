"""Types of the HTTP front-end (``agentd serve --http``) that are not JSON-RPC methods.

The HTTP API otherwise speaks the JSON-RPC methods' own params and results; these are its
additions: the page's start-up facts and event-stream tickets (the answer to a permission
request, ``permission/answer``, is a method of the table:
:class:`agentd.protocol.methods.PermissionAnswerParams`).
"""

from __future__ import annotations

from agentd.protocol.base import Result


class WebHello(Result):
    """``GET /api/hello``: the daemon's version and the default directory of new sessions."""

    version: str
    cwd: str


class WebTicket(Result):
    """``POST /api/ticket``: a one-time credential for one event stream
    (``GET /api/events?…&ticket=T``), good for 30 seconds."""

    ticket: str
