"""Questions of an ``agentd mcp`` run (the ``ask_user`` tool, an MCP server of the session)
as MCP elicitations to the caller.

A host that declared form elicitation, on a connection that can carry a request from the
server during the call (:func:`~agentd.mcp_server.approvals.cannot_ask` is None), is asked;
otherwise :func:`questioner` is None and the run's questions are answered at once that no user
can answer. Form mode: one form per request (:mod:`agentd.protocol.question_forms`). A
question with a URL (an MCP server's URL-mode elicitation inside the run) goes on as a
URL-mode elicitation when the host declared that mode: ``accept`` picks the question's first
option ("Open it"). ``decline`` and ``cancel`` decline; a failed request or an answer that
does not fit declines too (logged).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mcp.server.mcpserver import Context

from agentd.log import get_logger
from agentd.mcp_server.approvals import cannot_ask
from agentd.protocol.question_forms import form_answers, question_schema
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult, QuestionAnswer

log = get_logger("agentd.mcp_server")

Ask = Callable[[AskQuestionParams], Awaitable[AskQuestionResult]]
DECLINED = AskQuestionResult(answers=None)


def questioner(ctx: Context) -> Ask | None:
    """Asks the caller of ``ctx``'s request the run's questions (None: it cannot be asked)."""
    if cannot_ask(ctx) is not None:
        return None

    async def ask(params: AskQuestionParams) -> AskQuestionResult:
        try:
            if params.url and _has_url_mode(ctx):
                return await _ask_url(ctx, params)
            return await _ask_form(ctx, params)
        except Exception as exc:  # the host failed the request or went away
            log.info("question not asked", error=f"{type(exc).__name__}: {exc}")
            return DECLINED

    return ask


async def _ask_form(ctx: Context, params: AskQuestionParams) -> AskQuestionResult:
    message = "\n".join(q.question for q in params.questions)
    session = ctx.request_context.session
    result = await session.elicit_form(
        message=message,
        requested_schema=question_schema(params.questions),
        related_request_id=ctx.request_id,
    )
    if result.action != "accept" or result.content is None:
        return DECLINED
    return AskQuestionResult(answers=form_answers(params.questions, dict(result.content)))


async def _ask_url(ctx: Context, params: AskQuestionParams) -> AskQuestionResult:
    assert params.url is not None
    question = params.questions[0]
    result = await ctx.elicit_url(question.question, params.url, params.question_id)
    if result.action != "accept":
        return DECLINED
    return AskQuestionResult(answers=[QuestionAnswer(selected=[question.options[0].label])])


def _has_url_mode(ctx: Context) -> bool:
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and elicitation.url is not None
