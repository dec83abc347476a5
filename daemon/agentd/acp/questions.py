"""The sessions' questions (``ask_user``, MCP servers' elicitations) shown by the ACP editor.

An editor that declared ``clientCapabilities.elicitation.form`` gets one ``elicitation/create``
form per request (:mod:`agentd.protocol.question_forms`: per question its options, a
multi-select as several, and a text field for an answer of its own); ``accept`` with content
answers, ``decline``/``cancel`` decline. Any other editor is asked each question in turn
with ``session/request_permission``: one option per answer (the option's label as its
name), so it answers one choice per question (a multi-select too) and no text of its own; a
question without options (an MCP form's text field) cannot be asked that way, and the request
is left to other clients (or answered at once that nobody can). A ``cancelled`` outcome
declines.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from agentd.log import get_logger
from agentd.protocol import acp
from agentd.protocol.question_forms import form_answers, question_schema
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult, Question, QuestionAnswer

if TYPE_CHECKING:
    from agentd.rpc import Connection

log = get_logger("agentd.acp")
DECLINED = AskQuestionResult(answers=None)


class AcpQuestions:
    """Asks the editor behind ``editor()`` (see the module docstring); ``form`` is set from
    the editor's ``initialize``."""

    def __init__(self, editor: Callable[[], Connection]) -> None:
        self._editor = editor
        self.form = False

    async def ask(self, params: AskQuestionParams, session_id: str) -> AskQuestionResult | None:
        """The user's answers for the editor's session ``session_id``; None when the editor
        cannot show them."""
        if self.form:
            return await self._elicit(params, session_id)
        if any(not question.options for question in params.questions):
            return None
        answers = []
        for question in params.questions:
            answer = await self._permission(params, question, session_id)
            if answer is None:
                return DECLINED
            answers.append(answer)
        return AskQuestionResult(answers=answers)

    async def _elicit(self, params: AskQuestionParams, session_id: str) -> AskQuestionResult:
        message = "\n".join(question.question for question in params.questions)
        if params.url:
            message += f"\n{params.url}"
        request = acp.CreateElicitationParams(
            session_id=session_id,
            tool_call_id=params.tool_call_id,
            mode="form",
            message=message,
            requested_schema=question_schema(params.questions),
        )
        try:
            answer = await self._editor().request(
                "elicitation/create", request, result_type=acp.CreateElicitationResult
            )
        except msgspec.ValidationError as exc:
            log.warning("malformed elicitation answer: declined", error=str(exc))
            return DECLINED
        if answer.action != "accept" or answer.content is None:
            return DECLINED
        return AskQuestionResult(answers=form_answers(params.questions, answer.content))

    async def _permission(
        self, params: AskQuestionParams, question: Question, session_id: str
    ) -> QuestionAnswer | None:
        title = f"{question.header}: {question.question}" if question.header else question.question
        if params.url:
            title += f" ({params.url})"
        call = acp.ToolCallFields(
            tool_call_id=params.tool_call_id or params.question_id,
            title=title,
            kind="other",
            status="pending",
        )
        options = [
            acp.PermissionOption(option_id=f"answer-{n}", name=option.label, kind="allow_once")
            for n, option in enumerate(question.options)
        ]
        try:
            answer = await self._editor().request(
                "session/request_permission",
                acp.RequestPermissionParams(session_id=session_id, tool_call=call, options=options),
                result_type=acp.RequestPermissionResult,
            )
        except msgspec.ValidationError as exc:
            log.warning("malformed answer to a question: declined", error=str(exc))
            return None
        outcome = answer.outcome
        if not isinstance(outcome, acp.SelectedOutcome):
            return None
        chosen = {option.option_id: option.name for option in options}.get(outcome.option_id)
        return None if chosen is None else QuestionAnswer(selected=[chosen])
