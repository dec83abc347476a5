"""Types of the HTTP front-end (``agentd serve --http``) that are not JSON-RPC methods.

The HTTP API otherwise speaks the JSON-RPC methods' own params and results; these are its
additions: the page's start-up facts, the answer to a permission request and event-stream
tickets.
"""

from __future__ import annotations

from agentd.protocol.base import Params, Result
from agentd.protocol.events import PermissionOption


class WebHello(Result):
    """``GET /api/hello``: the daemon's version and the default directory of new sessions."""

    version: str
    cwd: str


class PermissionAnswerParams(Params):
    """``POST /api/permission/answer``: the user's choice for a pending tool call.

    The result is ``{"ok": false}`` when the request was already settled (another client
    answered first, the run was cancelled, or it timed out).
    """

    session_id: str
    tool_call_id: str
    outcome: PermissionOption


class WebTicket(Result):
    """``POST /api/ticket``: a one-time credential for one event stream
    (``GET /api/events?…&ticket=T``), good for 30 seconds."""

    ticket: str
