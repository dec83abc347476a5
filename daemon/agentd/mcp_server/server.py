"""The MCP tools of ``agentd mcp``: ``agentd_run`` (a new session in ``cwd``, one turn) and
``agentd_reply`` (one more turn of a session that ``agentd_run`` started in this process:
never another client's session from the store, whose mode and approvals are not the
caller's to use). Each answers with the run's final text and
``structuredContent`` ``{sessionId, text, stopReason, usage, filesChanged}`` (the final text
in both: hosts hand their model one or the other), declared as the tools' ``outputSchema``.

While a turn runs, a caller that sent a progress token gets ``notifications/progress`` (each
turn and tool call). Its ``notifications/cancelled`` cancels the run. In ``ask`` mode the
session's permission requests go to the caller as MCP elicitations
(:mod:`agentd.mcp_server.approvals`); a caller that cannot be asked cannot use ``ask`` mode:
the tool answers with an error saying why, before the run or as soon as a request comes.

The SDK is imported at module level (the tools' annotations name its types); only
``agentd mcp`` imports this module.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from agentd import __version__
from agentd.errors import RpcError
from agentd.mcp_server.approvals import approver, cannot_ask
from agentd.mcp_server.turns import Progress, TurnOutcome, Turns
from agentd.protocol.methods import PermissionMode, SessionNewParams

RUN_DOC = (
    "Hand a task to agentd, a coding agent: it works in the folder `cwd` (reading, editing "
    "files, running commands) until it is done, and answers with its final message. The "
    "result's structuredContent has the sessionId (continue with agentd_reply), the final "
    "text, stopReason, usage and filesChanged."
)
SANDBOX_DOC = (
    "workspace: file tools and bash may change only files under cwd (permissionMode auto "
    "needs it); none: no sandbox (default: agentd mcp's --sandbox, else the configuration)"
)
REPLY_DOC = (
    "Continue an agentd session that agentd_run started in this server with another prompt; "
    "one whole turn."
)
NOT_OURS = (
    "agentd_reply continues only the sessions agentd_run started in this agentd mcp server; "
    "{session} is not one of them (start a new one with agentd_run)"
)


class Usage(BaseModel):
    """Token counts and cost (USD) of the turn's model calls (a count of 0 may be left out)."""

    inputTokens: int = 0
    outputTokens: int = 0
    cacheReadTokens: int = 0
    cacheWriteTokens: int = 0
    cost: float = 0.0


class TurnResult(BaseModel):
    """``structuredContent`` of ``agentd_run`` and ``agentd_reply`` (their outputSchema)."""

    sessionId: str = Field(description="continue this session with agentd_reply")
    text: str = Field(description="agentd's final message (what it answers)")
    stopReason: Literal["end_turn", "max_turns", "budget", "cancelled", "error", "blocked"]
    usage: Usage
    filesChanged: list[str] = Field(description="files agentd's edits changed")


Answer = Annotated[CallToolResult, TurnResult]


def build_server(
    turns: Turns, defaults: SessionNewParams, roots: list[Path] | None = None
) -> MCPServer:
    """The MCP server; ``defaults`` gives the provider, model and mode of new sessions,
    ``roots`` the folders ``agentd_run`` may work in (their subfolders too; None: any)."""
    app = MCPServer("agentd", instructions=RUN_DOC, version=__version__)

    @app.tool(name="agentd_run", description=RUN_DOC)
    async def agentd_run(
        prompt: str,
        cwd: str,
        ctx: Context,
        provider: str | None = None,
        model: str | None = None,
        permissionMode: Literal["auto", "ask", "read-only"] | None = None,
        sandbox: Annotated[
            Literal["workspace", "none"] | None, Field(description=SANDBOX_DOC)
        ] = None,
    ) -> Answer:
        mode: PermissionMode | None = permissionMode or defaults.permission_mode
        outside = _outside_roots(cwd, roots)
        if outside is not None:
            return _error(outside)
        if mode == "ask" and (unasked := cannot_ask(ctx)) is not None:
            return _error(unasked)
        params = SessionNewParams(
            cwd=cwd,
            provider=provider or defaults.provider,
            model=model or defaults.model,
            permission_mode=mode,
            sandbox=sandbox or defaults.sandbox,
        )
        try:
            info = await (await turns.sessions()).create(params, None)
        except RpcError as exc:
            return _error(f"agentd could not open a session: {exc.message}")
        except OSError as exc:
            return _error(f"agentd could not reach its sessions: {exc}")
        turns.created.add(info.session_id)
        if info.permission_mode == "ask" and (unasked := cannot_ask(ctx)) is not None:
            return _error(f"{unasked} (session {info.session_id})")
        return await _turn(turns, info.session_id, prompt, ctx)

    @app.tool(name="agentd_reply", description=REPLY_DOC)
    async def agentd_reply(sessionId: str, prompt: str, ctx: Context) -> Answer:
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
        outcome = await turns.run(session_id, prompt, _progress(ctx), approver(ctx))
    except RpcError as exc:
        return _error(f"agentd: {exc.message}")
    return _answer(outcome)


def _answer(outcome: TurnOutcome) -> CallToolResult:
    """The turn's final text, in ``content`` and in ``structuredContent``; an error result
    when the run failed, a hook refused the prompt, or an approval could not be asked."""
    result = outcome.result
    text = outcome.text or f"(the run ended without a final message: {result.stop_reason})"
    if outcome.unasked is not None:
        text = f"{outcome.unasked} (the run was stopped; session {outcome.session_id})"
    elif result.error:
        text += f"\n\n[agentd: {result.error}]"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={**outcome.structured(), "text": text},
        is_error=outcome.unasked is not None or result.stop_reason in ("error", "blocked"),
    )


def _quoted(text: str) -> str:
    return repr(text[:80])


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _progress(ctx: Context) -> Progress:
    step = 0

    async def report(message: str) -> None:
        nonlocal step
        step += 1
        await ctx.report_progress(step, None, message)

    return report
