"""The ``ask_user`` tool: a structured question to the user instead of a guess.

1 to 4 questions, each with 2 to 6 options (one choice, or several with ``multi_select``);
the user may also write a free-text answer ("Other"). The run waits like an approval does
(the session's :class:`~agentd.tools.base.Questions` port: every client that shows questions
is asked, the first answer wins) and the answers come back as the result, with the questions
in its ``details`` (kept in the session file, so a reload shows both). When nobody can
answer (a headless run, a client that cannot show questions) the result says so at once and
tells the model to decide and state what it assumed; a timeout says the same after the wait.
It touches nothing outside the session, so every permission mode allows it.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.questions import (
    MAX_OPTIONS,
    MAX_QUESTIONS,
    MIN_OPTIONS,
    Question,
    QuestionOption,
    answers_text,
)
from agentd.protocol.tool_details import AskUserDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult

HEADER_CHARS = 40
UNANSWERED = (
    "No answer from the user: {reason}. Decide yourself, go on, and say in your reply what "
    "you assumed."
)


class AskOption(msgspec.Struct, forbid_unknown_fields=True):
    label: Annotated[
        str, msgspec.Meta(min_length=1, max_length=200, description="The choice, in 1-5 words.")
    ]
    description: Annotated[
        str | None, msgspec.Meta(description="What choosing it means, if not obvious.")
    ] = None


class AskQuestion(msgspec.Struct, forbid_unknown_fields=True):
    question: Annotated[
        str, msgspec.Meta(min_length=1, max_length=2000, description="The full question.")
    ]
    header: Annotated[str, msgspec.Meta(description="A short title, at most 40 characters.")]
    options: Annotated[
        list[AskOption],
        msgspec.Meta(
            min_length=MIN_OPTIONS,
            max_length=MAX_OPTIONS,
            description="The choices; the user can always write another answer instead.",
        ),
    ]
    multi_select: Annotated[bool, msgspec.Meta(description="Let the user pick several.")] = False


class AskUserParams(msgspec.Struct, forbid_unknown_fields=True):
    questions: Annotated[
        list[AskQuestion],
        msgspec.Meta(min_length=1, max_length=MAX_QUESTIONS, description="1 to 4 questions."),
    ]


class AskUserTool:
    name: ClassVar[str] = "ask_user"
    description: ClassVar[str] = (
        "Ask the user one to four multiple-choice questions when a decision is theirs to make "
        "and you cannot find the answer yourself (a preference, an ambiguous requirement, a "
        "choice between approaches). Each question has 2-6 short options; the user may also "
        "answer in their own words. Ask only what matters; do not ask for permission to run "
        "tools. If no user can answer, the result says so: then decide and say what you "
        "assumed."
    )
    Params: ClassVar[type[AskUserParams]] = AskUserParams
    kind: ClassVar[ToolKind] = "other"
    mutating: ClassVar[bool] = False

    def locations(self, params: AskUserParams, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: AskUserParams, ctx: ToolContext) -> ToolResult:
        questions = wire_questions(params.questions)
        port = ctx.ports.questions
        if port is None:
            reason = "this session has no way to reach a user"
            details = AskUserDetails(questions=questions, reason=reason)
            return ToolResult(UNANSWERED.format(reason=reason), details)
        resolved = await port.ask(questions, source="tool", tool_call_id=ctx.tool_call_id)
        details = AskUserDetails(
            questions=questions, answers=resolved.answers, reason=resolved.reason,
            question_id=resolved.question_id,
        )  # fmt: skip
        if resolved.answers is None:
            return ToolResult(UNANSWERED.format(reason=resolved.reason or "none"), details)
        text = "The user answered:\n" + answers_text(questions, resolved.answers)
        return ToolResult(text, details)


def wire_questions(asked: list[AskQuestion]) -> list[Question]:
    """The model's questions as the protocol's; ToolError for options whose labels repeat.
    A header longer than :data:`HEADER_CHARS` is cut (it is a chip, not the question)."""
    questions = []
    for number, item in enumerate(asked, 1):
        labels = [option.label.strip() for option in item.options]
        if len(set(labels)) != len(labels) or not all(labels):
            raise ToolError(f"Question {number} has empty or repeated option labels.")
        header = " ".join(item.header.split())
        if len(header) > HEADER_CHARS:
            header = header[: HEADER_CHARS - 1] + "…"
        options = [
            QuestionOption(label=label, description=option.description)
            for label, option in zip(labels, item.options, strict=True)
        ]
        questions.append(
            Question(
                question=item.question,
                header=header,
                options=options,
                multi_select=item.multi_select,
            )
        )
    return questions
