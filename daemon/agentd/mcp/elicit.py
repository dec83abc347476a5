"""An MCP server's ``elicitation/create`` as questions to the user of the session whose tool
call is running (the session's :class:`~agentd.tools.base.Questions` port).

agentd declares the ``elicitation`` capability (form and URL modes) to every server. A
request is answered by the tool call it arrives during (:class:`Elicitor`, made per call by
:func:`call_elicitor`); one that arrives while no call of the server runs is declined.

Form mode: the flat ``requestedSchema`` becomes up to 4 questions per ask (a longer form is
asked in several rounds), one per property — an ``enum``/``oneOf`` string: its values as the
options (more than 6: a typed answer naming one); an array of such: a multi-select; a boolean:
Yes / No; any other string, number or integer: a typed answer (a question without options).
The answers become the ``content`` (numbers parsed; an optional field left empty is left out).
URL mode: one question asks the user's consent to open the URL (the client shows it; agentd
opens nothing); "Open it" accepts. Nobody to ask, a timeout or a cancelled run answer
``cancel``; the user declining, ``decline``; a form whose answers do not parse, ``decline``
with nothing sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agentd.protocol.questions import (
    DECLINED,
    MAX_OPTIONS,
    MAX_QUESTIONS,
    Question,
    QuestionAnswer,
    QuestionOption,
    QuestionResolved,
)
from agentd.protocol.tool_details import Elicited

if TYPE_CHECKING:
    from agentd.tools.base import Questions

Json = dict[str, Any]
Elicitor = Callable[[Any], Awaitable[Json]]
"""Answers one ``elicitation/create`` (its params) with the result object."""

YES, NO = "Yes", "No"
OPEN, KEEP_CLOSED = "Open it", "Do not open it"
DECLINE: Json = {"action": "decline"}
CANCEL: Json = {"action": "cancel"}


def call_elicitor(
    questions: Questions | None,
    server: str,
    tool_call_id: str | None,
    record: list[Elicited] | None = None,
) -> Elicitor | None:
    """The elicitor of one tool call of ``server`` (None: the session cannot ask). Each
    round of questions it asks is appended to ``record`` with its answers (the call's
    :class:`~agentd.protocol.tool_details.McpDetails` ``elicited``: kept in the session file
    with the tool result, so replayed)."""
    if questions is None:
        return None
    if record is not None:
        questions = _Recording(questions, record)

    async def elicit(params: Any) -> Json:
        if not isinstance(params, dict):
            return DECLINE
        if params.get("mode") == "url":
            return await _ask_url(questions, server, tool_call_id, params)
        return await _ask_form(questions, server, tool_call_id, params)

    return elicit


class _Recording:
    """A :class:`~agentd.tools.base.Questions` port that notes every round it asks."""

    def __init__(self, questions: Questions, record: list[Elicited]) -> None:
        self.questions = questions
        self.record = record

    async def ask(self, questions: list[Question], **where: Any) -> QuestionResolved:
        resolved = await self.questions.ask(questions, **where)
        self.record.append(
            Elicited(
                questions=questions, answers=resolved.answers, reason=resolved.reason,
                question_id=resolved.question_id, url=where.get("url"),
            )
        )  # fmt: skip
        return resolved


async def _ask_url(
    questions: Questions, server: str, tool_call_id: str | None, params: Json
) -> Json:
    url = params.get("url")
    if not isinstance(url, str) or not url:
        return DECLINE
    message = str(params.get("message") or f"{server} asks you to open a page.")
    question = Question(
        question=message,
        header="Open link",
        options=[
            QuestionOption(label=OPEN, description=url),
            QuestionOption(label=KEEP_CLOSED),
        ],
    )
    resolved = await questions.ask(
        [question], source="mcp", tool_call_id=tool_call_id, server=server, url=url
    )
    if resolved.answers is None:
        return DECLINE if resolved.reason == DECLINED else CANCEL
    return {"action": "accept"} if OPEN in resolved.answers[0].selected else DECLINE


async def _ask_form(
    questions: Questions, server: str, tool_call_id: str | None, params: Json
) -> Json:
    schema = params.get("requestedSchema")
    fields = form_fields(schema if isinstance(schema, dict) else {})
    message = str(params.get("message") or f"{server} asks:")
    if not fields:  # nothing to fill in: a plain confirmation
        fields = [_Field("", {"type": "boolean"}, required=True)]
    content: Json = {}
    for start in range(0, len(fields), MAX_QUESTIONS):
        chunk = fields[start : start + MAX_QUESTIONS]
        asked = [field.question(message) for field in chunk]
        resolved = await questions.ask(
            asked, source="mcp", tool_call_id=tool_call_id, server=server
        )
        if resolved.answers is None:
            return DECLINE if resolved.reason == DECLINED else CANCEL
        for field, answer in zip(chunk, resolved.answers, strict=True):
            value = field.value(answer)
            if value is _INVALID:
                return DECLINE
            if value is not _EMPTY and field.name:
                content[field.name] = value
            if not field.name and value is False:
                return DECLINE
    return {"action": "accept", "content": content}


_EMPTY = object()
_INVALID = object()


class _Field:
    """One property of a form: its name, its schema, whether it is required."""

    def __init__(self, name: str, schema: Json, *, required: bool) -> None:
        self.name = name
        self.schema = schema
        self.required = required
        self.choices = _choices(schema)

    def question(self, message: str) -> Question:
        title = str(self.schema.get("title") or self.name or "Confirm")
        about = self.schema.get("description")
        text = message if not self.name else f"{message}\n{title}" + (f": {about}" if about else "")
        kind = self.schema.get("type")
        if kind == "boolean":
            options = [QuestionOption(label=YES), QuestionOption(label=NO)]
        elif self.choices and len(self.choices) <= MAX_OPTIONS:
            options = [QuestionOption(label=label) for label in self.choices.values()]
        else:
            options = []
            if self.choices:
                text += f"\n(one of: {', '.join(self.choices)})"
        return Question(
            question=text, header=title[:40], options=options, multi_select=kind == "array"
        )

    def value(self, answer: QuestionAnswer) -> Any:
        """The content value of ``answer``: ``_EMPTY`` to leave the field out, ``_INVALID``
        when it does not fit the field."""
        kind = self.schema.get("type")
        labels = {label: value for value, label in self.choices.items()}
        picked = [labels.get(label, label) for label in answer.selected]
        typed = (answer.other or "").strip()
        if kind == "boolean":
            return (YES in answer.selected) if answer.selected else _parsed_bool(typed)
        if kind == "array":
            return picked + ([typed] if typed else [])
        raw = picked[0] if picked else typed
        if raw == "":
            return _INVALID if self.required else _EMPTY
        if self.choices and raw not in self.choices:
            return _INVALID
        if kind in ("number", "integer"):
            return _parsed_number(raw, integer=kind == "integer")
        return raw


def form_fields(schema: Json) -> list[_Field]:
    """The properties of a flat elicitation schema, in order."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return []
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    return [
        _Field(str(name), spec, required=name in needed)
        for name, spec in properties.items()
        if isinstance(spec, dict)
    ]


def _choices(schema: Json) -> dict[str, str]:
    """An enum's values and their labels: ``enum`` (+ ``enumNames``), ``oneOf``/``anyOf``
    consts with titles, or the same under ``items`` of an array."""
    source = schema.get("items") if schema.get("type") == "array" else schema
    if not isinstance(source, dict):
        return {}
    values = source.get("enum")
    if isinstance(values, list):
        names = source.get("enumNames") or schema.get("enumNames")
        titles = names if isinstance(names, list) and len(names) == len(values) else values
        return {str(v): str(t) for v, t in zip(values, titles, strict=True)}
    for key in ("oneOf", "anyOf"):
        items = source.get(key)
        if isinstance(items, list):
            return {
                str(item["const"]): str(item.get("title") or item["const"])
                for item in items
                if isinstance(item, dict) and "const" in item
            }
    return {}


def _parsed_bool(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("y", "yes", "true", "1"):
        return True
    if lowered in ("n", "no", "false", "0"):
        return False
    return _INVALID


def _parsed_number(text: str, *, integer: bool) -> Any:
    try:
        return int(text) if integer else float(text)
    except ValueError:
        return _INVALID
