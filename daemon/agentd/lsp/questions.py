"""The sessions' questions (``ask_user``, MCP servers' elicitations) in the LSP editor: each
question in turn as a ``window/showMessageRequest`` whose buttons are its options.

The message is the question (its header first; control characters escaped); the button
chosen is the answer, one choice per question (a multi-select too: LSP has no checkboxes, and
no text of the user's own). A dismissed message declines the whole request. A question without
options (an MCP form's text field) cannot be shown: the request is left to other clients, or
answered at once that nobody can.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentd.protocol.controls import escape_controls
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult, QuestionAnswer

Request = Callable[[str, Any], Awaitable[Any]]
INFO = 3


async def ask_in_messages(request: Request, params: AskQuestionParams) -> AskQuestionResult | None:
    """Ask ``params`` through ``request`` (the editor's ``window/showMessageRequest``); None
    when a question has no options to offer."""
    if any(not question.options for question in params.questions):
        return None
    answers = []
    for question in params.questions:
        text = f"{question.header}: {question.question}" if question.header else question.question
        if params.url:
            text += f" ({params.url})"
        labels = [option.label for option in question.options]
        message = {
            "type": INFO,
            "message": escape_controls(f"agentd asks: {text}", crlf=False),
            "actions": [{"title": label} for label in labels],
        }
        answer = await request("window/showMessageRequest", message)
        title = getattr(answer, "title", None)
        if title not in labels:
            return AskQuestionResult(answers=None)
        answers.append(QuestionAnswer(selected=[str(title)]))
    return AskQuestionResult(answers=answers)
