"""Questions to the user: what is asked, what is answered, and how it crosses the wire.

One mechanism serves every asker: the ``ask_user`` tool, an MCP server's
``elicitation/create`` and anything else in the daemon that needs a choice. A request is 1 to
4 :class:`Question` items, each with 2 to 6 :class:`QuestionOption` choices (one, or several
with ``multi_select``); every question also takes a free-text answer (``other``). The session
announces it with a ``question_request`` event and asks every client that declared the
``questions`` capability with ``session/askQuestion``; the first answer wins (from such a
client, or from ``question/answer``), and a ``question_resolved`` event follows every
``question_request``: with the answers, or without them and the reason (no client could
answer, the time ran out, the run was cancelled, the user declined).

``url`` is set for an MCP server's URL-mode elicitation: the one question asks the user's
consent to open that address; nothing is opened by the daemon.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from agentd.protocol.base import Params, Result, Wire

MAX_QUESTIONS = 4
MIN_OPTIONS, MAX_OPTIONS = 2, 6
NO_USER = "no user can answer (no connected client shows questions)"
DECLINED = "the user declined to answer"
CANCELLED = "the run was cancelled"
QuestionSource = Literal["tool", "mcp", "daemon"]
"""Who asks: the ``ask_user`` tool, an MCP server (``elicitation/create``), the daemon."""


class QuestionOption(Wire):
    """One choice: its ``label`` (what an answer names) and an optional ``description``."""

    label: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    description: str | None = None


class Question(Wire, kw_only=True):
    """One question: the full ``question``, a short ``header`` (a chip or title, ≤ 40
    characters), its ``options`` (``ask_user`` always gives 2 to 6; none: only a typed answer,
    as an MCP form's text field asks); ``multi_select`` lets the user pick several."""

    question: Annotated[str, msgspec.Meta(min_length=1, max_length=4000)]
    header: Annotated[str, msgspec.Meta(max_length=40)] = ""
    options: Annotated[list[QuestionOption], msgspec.Meta(max_length=MAX_OPTIONS)]
    multi_select: bool = False


class QuestionAnswer(Wire, omit_defaults=False):
    """The answer to one question: the labels chosen (one, or several for ``multiSelect``;
    none when only ``other`` was written) and the free text the user wrote (``other``)."""

    selected: list[str] = msgspec.field(default_factory=list)
    other: str | None = None


class QuestionRequest(Wire, tag="question_request", tag_field="type"):
    """The session waits for the user's answer to ``questions`` (sent as
    ``session/askQuestion`` to the clients that answer questions). ``tool_call_id``: the
    ``ask_user`` call (or the MCP tool call) that asks; ``server``: the MCP server asking;
    ``url``: a URL-mode elicitation's address, to open only if the user consents."""

    question_id: str
    questions: list[Question]
    source: QuestionSource = "tool"
    tool_call_id: str | None = None
    server: str | None = None
    url: str | None = None


class QuestionResolved(Wire, tag="question_resolved", tag_field="type"):
    """The question ``question_id`` was settled: ``answers`` (one per question, in order) when
    the user answered, else None and ``reason`` (declined, nobody could answer, timed out,
    cancelled)."""

    question_id: str
    answers: list[QuestionAnswer] | None = None
    reason: str | None = None


class AskQuestionParams(Result):
    """``session/askQuestion`` (server → client): ask the user ``questions``; the fields as on
    the ``question_request`` event."""

    session_id: str
    question_id: str
    questions: list[Question]
    source: QuestionSource = "tool"
    tool_call_id: str | None = None
    server: str | None = None
    url: str | None = None


class AskQuestionResult(Params):
    """The client's answer: one :class:`QuestionAnswer` per question, in order; ``answers``
    null (or absent) when the user declined to answer."""

    answers: list[QuestionAnswer] | None = None


class QuestionAnswerParams(Params):
    """``question/answer``: the user's answers to a pending question of a session (``answers``
    null: the user declined). The result is ``{"ok": false}`` when it was already settled
    (another client answered first, the run was cancelled, or it timed out) or an answer does
    not fit its question."""

    session_id: str
    question_id: str
    answers: list[QuestionAnswer] | None = None


def answers_fit(questions: list[Question], answers: list[QuestionAnswer]) -> str | None:
    """Why ``answers`` do not answer ``questions`` (count, unknown labels, several picks of a
    single-choice question, nothing picked nor written), or None when they do."""
    if len(answers) != len(questions):
        return f"{len(answers)} answers for {len(questions)} questions"
    for number, (question, answer) in enumerate(zip(questions, answers, strict=True), 1):
        labels = {option.label for option in question.options}
        unknown = [label for label in answer.selected if label not in labels]
        if unknown:
            return f"question {number} has no option {unknown[0]!r}"
        if len(answer.selected) > 1 and not question.multi_select:
            return f"question {number} takes one choice"
        if not answer.selected and not (answer.other or "").strip():
            return f"question {number} was not answered"
    return None


def answers_text(questions: list[Question], answers: list[QuestionAnswer]) -> str:
    """The answers as the model reads them: one ``header/question → choices`` line each."""
    lines = []
    for question, answer in zip(questions, answers, strict=True):
        picked = list(answer.selected)
        if answer.other and answer.other.strip():
            picked.append(f"Other: {answer.other.strip()}")
        lines.append(f'"{question.question}" = {", ".join(picked)}')
    return "\n".join(lines)
