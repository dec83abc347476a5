"""Questions as an elicitation form (MCP's and ACP's ``elicitation/create`` form mode) and
the form's answers back as :class:`~agentd.protocol.questions.QuestionAnswer` items.

Per question (numbered from 1) an ``answerN`` property — a string whose ``oneOf`` lists the
options as consts with titles, or for a multi-select an array whose ``items.anyOf`` does — and
an ``otherN`` string for an answer in the user's own words (required when the question has no
options). Both protocols accept this flat, primitive-only schema.
"""

from __future__ import annotations

from typing import Any

from agentd.protocol.questions import Question, QuestionAnswer


def question_schema(questions: list[Question]) -> dict[str, Any]:
    """The elicitation form of ``questions`` (see the module docstring)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for number, question in enumerate(questions, 1):
        title = question.header or f"Question {number}"
        choices = [{"const": o.label, "title": o.label} for o in question.options]
        if question.options and question.multi_select:
            properties[f"answer{number}"] = {
                "type": "array", "title": title, "description": question.question,
                "items": {"anyOf": choices},
            }  # fmt: skip
        elif question.options:
            properties[f"answer{number}"] = {
                "type": "string", "title": title, "description": question.question,
                "oneOf": choices,
            }  # fmt: skip
        properties[f"other{number}"] = {
            "type": "string",
            "title": f"{title}: your own answer" if question.options else title,
            "description": "Instead of the options" if question.options else question.question,
        }
        if not question.options:
            required.append(f"other{number}")
    return {"type": "object", "properties": properties, "required": required}


def form_answers(questions: list[Question], content: dict[str, Any]) -> list[QuestionAnswer]:
    """The answers in a form's ``content``, one per question."""
    answers = []
    for number, _question in enumerate(questions, 1):
        picked = content.get(f"answer{number}")
        selected = [picked] if isinstance(picked, str) else list(picked or [])
        other = content.get(f"other{number}")
        answers.append(
            QuestionAnswer(
                selected=[str(label) for label in selected],
                other=other if isinstance(other, str) and other.strip() else None,
            )
        )
    return answers
