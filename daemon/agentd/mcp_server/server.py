"""The MCP tools of ``agentd mcp``: ``agentd_run`` (a new session in ``cwd``, one turn) and
``agentd_reply`` (one more turn of a session that ``agentd_run`` started in this process:
never another client's session from the store, whose mode and approvals are not the
caller's to use). Each answers with the run's final text and
``structuredContent`` ``{sessionId, stopReason, usage, filesChanged}``.

While a turn runs, a caller that sent a progress token gets ``notifications/progress`` (each
turn and tool call). Its ``notifications/cancelled`` cancels the run. In ``ask`` mode the
session's permission requests go to the caller as MCP elicitations; a caller without
elicitation cannot use ``ask`` mode (the tool answers with an error saying so).

The SDK is imported at module level (the tools' annotations name its types); only
``agentd mcp`` imports this module.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from agentd.errors import RpcError
from agentd.mcp_server.turns import Approve, Progress, TurnOutcome, Turns
from agentd.protocol.methods import (
    PermissionMode,
    RequestPermissionParams,
    RequestPermissionResult,
    SessionNewParams,
)

NO_ELICITATION = (
    "permission mode 'ask' needs an MCP client that supports elicitation (to ask you about "
    "each tool call), and this client does not; pass permissionMode 'auto' or 'read-only'"
)
RUN_DOC = (
    "Hand a task to agentd, a coding agent: it works in the folder `cwd` (reading, editing "
    "files, running commands) until it is done, and answers with its final message. The "
    "result's structuredContent has the sessionId (continue with agentd_reply), stopReason, "
    "usage and filesChanged."
)
REPLY_DOC = (
    "Continue an agentd session that agentd_run started in this server with another prompt; "
    "one whole turn."
)
NOT_OURS = (
    "agentd_reply continues only the sessions agentd_run started in this agentd mcp server; "
    "{session} is not one of them (start a new one with agentd_run)"
)


def build_server(
    turns: Turns, defaults: SessionNewParams, roots: list[Path] | None = None
) -> MCPServer:
    """The MCP server; ``defaults`` gives the provider, model and mode of new sessions,
    ``roots`` the folders ``agentd_run`` may work in (their subfolders too; None: any)."""
    app = MCPServer("agentd", instructions=RUN_DOC)

    @app.tool(name="agentd_run", description=RUN_DOC)
    async def agentd_run(
        prompt: str,
        cwd: str,
        ctx: Context,
        provider: str | None = None,
        model: str | None = None,
        permissionMode: Literal["auto", "ask", "read-only"] | None = None,
    ) -> CallToolResult:
        mode: PermissionMode | None = permissionMode or defaults.permission_mode
        outside = _outside_roots(cwd, roots)
        if outside is not None:
            return _error(outside)
        if mode == "ask" and not _elicits(ctx):
            return _error(NO_ELICITATION)
        params = SessionNewParams(
            cwd=cwd,
            provider=provider or defaults.provider,
            model=model or defaults.model,
            permission_mode=mode,
        )
        assert turns.api is not None
        try:
            info = await turns.api.create(params, None)
        except RpcError as exc:
            return _error(f"agentd could not open a session: {exc.message}")
        turns.created.add(info.session_id)
        if info.permission_mode == "ask" and not _elicits(ctx):
            return _error(f"{NO_ELICITATION} (session {info.session_id})")
        return await _turn(turns, info.session_id, prompt, ctx)

    @app.tool(name="agentd_reply", description=REPLY_DOC)
    async def agentd_reply(sessionId: str, prompt: str, ctx: Context) -> CallToolResult:
        if sessionId not in turns.created:
            return _error(NOT_OURS.format(session=_quoted(sessionId)))
        return await _turn(turns, sessionId, prompt, ctx)

    del agentd_run, agentd_reply  # registered
    return app


def _outside_roots(cwd: str, roots: list[Path] | None) -> str | None:
    """Why ``cwd`` is refused (None: it lies in one of ``roots``, symlinks resolved)."""
    if roots is None:
        return None
    real = Path(os.path.realpath(cwd))
    if any(real.is_relative_to(root) for root in roots):
        return None
    allowed = ", ".join(str(root) for root in roots) or "(none)"
    return (
        f"agentd could not open a session: cwd {cwd} is outside the folders this agentd mcp "
        f"may work in ({allowed}); start it with --root DIR for another folder"
    )


async def _turn(turns: Turns, session_id: str, prompt: str, ctx: Context) -> CallToolResult:
    try:
        outcome = await turns.run(session_id, prompt, _progress(ctx), _approver(ctx))
    except RpcError as exc:
        return _error(f"agentd: {exc.message}")
    return _answer(outcome)


def _answer(outcome: TurnOutcome) -> CallToolResult:
    result = outcome.result
    text = outcome.text or f"(the run ended without a final message: {result.stop_reason})"
    if result.error:
        text += f"\n\n[agentd: {result.error}]"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=outcome.structured(),
        is_error=result.stop_reason in ("error", "blocked"),  # blocked: a hook refused the prompt
    )


def _quoted(text: str) -> str:
    return repr(text[:80])


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _elicits(ctx: Context) -> bool:
    capabilities = ctx.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


def _progress(ctx: Context) -> Progress:
    step = 0

    async def report(message: str) -> None:
        nonlocal step
        step += 1
        await ctx.report_progress(step, None, message)

    return report


def _approver(ctx: Context) -> Approve:
    class Approval(BaseModel):
        allow: bool = Field(description="run this tool call")
        always: bool = Field(default=False, description="allow it for the rest of the session")

    async def approve(params: RequestPermissionParams) -> RequestPermissionResult:
        if not _elicits(ctx):
            return RequestPermissionResult(outcome="reject_once")
        question = f"agentd wants to run {params.tool} with {params.args}. Allow it?"
        answer = await ctx.elicit(question, Approval)
        data = getattr(answer, "data", None)
        if answer.action != "accept" or data is None or not data.allow:
            return RequestPermissionResult(outcome="reject_once")
        return RequestPermissionResult(outcome="allow_always" if data.always else "allow_once")

    return approve
