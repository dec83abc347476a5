"""Approvals of ``agentd mcp`` in ``ask`` mode: each permission request of a run becomes an
MCP form elicitation to the caller.

:func:`cannot_ask` says why a caller cannot be asked, or None: a client that declared no
form elicitation, or a request whose connection cannot carry a server-to-client request
while the call runs (MCP 2026-07-28 and stateless HTTP forbid them). The tools check it
before a run starts. :func:`approver` asks; every way the question cannot be asked or
answered (no back channel, the client failing the request or closing the connection, an
answer that is not the form) raises :class:`~agentd.mcp_server.turns.ApprovalUnavailable`
at once, which stops the run with that reason.
"""

from __future__ import annotations

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError, NoBackChannelError
from pydantic import BaseModel, Field

from agentd.mcp_server.turns import ApprovalUnavailable, Approve
from agentd.protocol.methods import RequestPermissionParams, RequestPermissionResult

INSTEAD = "pass permissionMode 'auto' or 'read-only'"
NO_ELICITATION = (
    "permission mode 'ask' needs an MCP client that supports elicitation (to ask you about "
    f"each tool call), and this client does not; {INSTEAD}"
)
NO_BACK_CHANNEL = (
    "permission mode 'ask' asks you about each tool call while the call runs, and this "
    "connection cannot carry a request from the server during a call (protocol version "
    f"{{version}}); {INSTEAD}"
)
FAILED = "agentd could not ask for approval of {tool}: {reason}; {instead}"


class Approval(BaseModel):
    """The form of one approval."""

    allow: bool = Field(description="run this tool call")
    always: bool = Field(default=False, description="allow it for the rest of the session")


def cannot_ask(ctx: Context) -> str | None:
    """Why the caller of this request cannot be asked for approvals, or None."""
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):
        return NO_ELICITATION
    if not ctx.session.can_send_request:
        return NO_BACK_CHANNEL.format(version=ctx.protocol_version or "unknown")
    return None


def approver(ctx: Context) -> Approve:
    """Asks the caller of ``ctx``'s request about each permission request."""

    async def approve(params: RequestPermissionParams) -> RequestPermissionResult:
        reason = cannot_ask(ctx)
        if reason is not None:
            raise ApprovalUnavailable(reason)
        question = f"agentd wants to run {params.tool} with {params.args}. Allow it?"
        try:
            answer = await ctx.elicit(question, Approval)
        except NoBackChannelError as exc:
            version = ctx.protocol_version or "unknown"
            raise ApprovalUnavailable(NO_BACK_CHANNEL.format(version=version)) from exc
        except MCPError as exc:
            why = f"the client failed the request ({exc.message})"
            raise ApprovalUnavailable(_failed(params, why)) from exc
        except Exception as exc:  # the connection closed, an answer that is not the form
            why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise ApprovalUnavailable(_failed(params, why)) from exc
        data = getattr(answer, "data", None)
        if answer.action != "accept" or data is None or not data.allow:
            return RequestPermissionResult(outcome="reject_once")
        return RequestPermissionResult(outcome="allow_always" if data.always else "allow_once")

    return approve


def _failed(params: RequestPermissionParams, reason: str) -> str:
    return FAILED.format(tool=params.tool, reason=reason[:300], instead=INSTEAD)
