"""What each tool reports about a finished call, for UIs: :data:`ToolDetails`.

A tool's ``details`` never reach the model (the result content does). They ride on
``tool_execution_end`` events and in ``tool_result`` messages as one of the Structs below,
told apart by ``type``: the tool's name; ``read_image``, ``read_notebook`` or ``read_pdf``
for a read that returned an image, a notebook or a PDF (:mod:`agentd.protocol.
document_details`); and ``error`` for any call that failed before or while running. Every
other key is camelCase like the rest of the protocol; a key whose default is shown is left
out when it has that value. Clients read the fields by these names (TypeScript through the
generated ``protocol.ts``).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentd.protocol.base import Wire
from agentd.protocol.document_details import (
    NotebookEditDetails,
    ReadNotebookDetails,
    ReadPdfDetails,
    SkillDetails,
    WebSearchDetails,
)
from agentd.protocol.lsp_details import LspDetails, LspDiagnostic
from agentd.protocol.processes import ProcessDetails, ProcessListDetails
from agentd.protocol.questions import Question, QuestionAnswer
from agentd.protocol.usage import Usage


class BashDetails(Wire, tag="bash", tag_field="type"):
    """A shell command ran: how it ended, how long it took, where its output went.

    ``exit_code`` is None when a signal (``signal``, e.g. ``SIGKILL``) or the timeout
    (``timed_out``) ended it. ``cwd`` is the directory the command ended in. Output over the
    limits is cut (``truncated``) and the whole of it kept in ``spill_path`` (``total_bytes``
    long); ``spill_complete`` is false when that file could not hold all of it.
    """

    command: str
    exit_code: int | None
    signal: str | None
    timed_out: bool
    duration_ms: float
    truncated: bool
    spill_path: str | None
    total_bytes: int
    cwd: str | None
    spill_complete: bool = True


class ReadDetails(Wire, tag="read", tag_field="type"):
    """A text file was read: which lines, and where to continue.

    ``lines`` lines from line ``offset`` of ``path`` (``total_lines`` in the file when known).
    When the result stops early, ``truncated`` is true and ``next_offset`` is the line to
    continue from.
    """

    path: str
    offset: int
    lines: int
    total_lines: int | None
    truncated: bool = False
    next_offset: int | None = None


class ReadImageDetails(Wire, tag="read_image", tag_field="type"):
    """An image file was read (``bytes`` long, of type ``mime_type``).

    ``shown`` is false when the model cannot view images (it was told so instead).
    """

    path: str
    mime_type: str
    bytes: int
    shown: bool = True


class WriteDetails(Wire, tag="write", tag_field="type"):
    """A file was written (``created`` when it did not exist), with the change as a diff.

    The diff fields are set unless the old or new content was binary or too big to diff (then
    ``diff_omitted`` is true).
    """

    path: str
    created: bool
    bytes: int
    lines: int
    diff: str | None = None
    first_changed_line: int | None = None
    added: int | None = None
    removed: int | None = None
    diff_omitted: bool = False
    diagnostics: list[LspDiagnostic] | None = None
    """The problems a language server found that this change introduced (None: no server
    checked the file)."""


class EditDetails(Wire, tag="edit", tag_field="type"):
    """A file was edited by ``replacements`` exact replacements, with the change as a diff.

    ``diff`` is unified (``--- a/…``/``+++ b/…``, paths relative to the session's cwd);
    ``first_changed_line`` is 1-based in the new text.
    """

    path: str
    replacements: int
    diff: str
    first_changed_line: int | None
    added: int
    removed: int
    diagnostics: list[LspDiagnostic] | None = None
    """As :attr:`WriteDetails.diagnostics`."""


class UndoEditDetails(Wire, tag="undo_edit", tag_field="type"):
    """The last write or edit of a file was undone; ``remaining`` undo steps are left for it.

    ``deleted``: the file did not exist before that change, so it was removed. The diff fields
    are set when both sides are text.
    """

    path: str
    deleted: bool
    remaining: int
    diff: str | None = None
    first_changed_line: int | None = None
    added: int | None = None
    removed: int | None = None
    diagnostics: list[LspDiagnostic] | None = None
    """As :attr:`WriteDetails.diagnostics`."""


class LsDetails(Wire, tag="ls", tag_field="type"):
    """A directory was listed: it holds ``count`` entries (``truncated``: not all shown)."""

    path: str
    count: int
    truncated: bool


class FindDetails(Wire, tag="find", tag_field="type"):
    """Paths were found: ``count`` matched (``cut``: the result limit stopped the walk)."""

    path: str
    count: int
    cut: bool


class GrepDetails(Wire, tag="grep", tag_field="type"):
    """A search ran (with ``backend``): ``matches`` lines in ``files`` files matched.

    ``cut`` when the result limit stopped the search, ``truncated`` when the output was cut.
    """

    path: str
    backend: Literal["rg", "python"]
    matches: int
    files: int
    cut: bool
    truncated: bool = False


class TaskDetails(Wire, tag="task", tag_field="type"):
    """A subagent ran: its own session, profile and how its run ended.

    ``child_session_id`` is the child's session (listed under this one, resumable);
    ``agent`` the profile it ran; ``description`` the task's title; ``stop_reason``,
    ``turns``, ``usage`` and ``cost`` are its run's (the parent's run usage includes them).
    """

    child_session_id: str
    agent: str
    description: str
    stop_reason: str
    """As in the child's ``agent_end``: end_turn, max_turns, budget, cancelled or error."""
    turns: int
    usage: Usage
    cost: float


class TodoDetails(Wire, tag="todo", tag_field="type"):
    """The agent's plan was written: ``steps`` steps, ``completed`` of them done (the plan
    itself comes as a ``plan_update`` event)."""

    steps: int
    completed: int


class WebFetchDetails(Wire, tag="web_fetch", tag_field="type"):
    """A web page was fetched: the final ``url`` after ``redirects`` redirects, its HTTP
    ``status`` and ``content_type``, ``bytes`` read, what the model got (``format``:
    ``markdown`` for converted HTML, ``text`` otherwise), in ``duration_ms``. A result over the
    limits is cut (``truncated``) with the whole text in ``spill_path``."""

    url: str
    status: int
    content_type: str
    format: Literal["markdown", "text"]
    bytes: int
    redirects: int
    duration_ms: float
    truncated: bool = False
    spill_path: str | None = None


ToolFailure = Literal["invalid_arguments", "tool_error", "os_error"]
"""Why a call failed: its arguments did not validate, the tool refused or failed (its text says
why), or the operating system refused (a permission, a missing file…)."""


class Elicited(Wire):
    """One round of questions an MCP server asked during a call (``elicitation/create``):
    the ``questions``, the user's ``answers`` (one per question), or None and ``reason``
    when nobody answered; ``question_id`` as its ``question_request`` had it, and a URL-mode
    request's ``url``."""

    questions: list[Question]
    answers: list[QuestionAnswer] | None = None
    reason: str | None = None
    question_id: str | None = None
    url: str | None = None


class McpDetails(Wire, tag="mcp", tag_field="type"):
    """A tool of an MCP server ran: the ``server`` and its ``tool`` (the call's name is
    ``mcp__<server>__<tool>``), the result's ``structured_content`` as the server sent it,
    whether the text was cut at the output limits (``truncated``), and the questions the
    server asked the user meanwhile with their answers (``elicited``, in order)."""

    server: str
    tool: str
    structured_content: Any = None
    truncated: bool = False
    elicited: list[Elicited] = msgspec.field(default_factory=list)


class AskUserDetails(Wire, tag="ask_user", tag_field="type"):
    """``ask_user`` asked ``questions``: the user's ``answers`` (one per question), or None
    and ``reason`` when nobody answered (nobody could, the time ran out, declined);
    ``question_id`` as its ``question_request`` had it (None: no request was made)."""

    questions: list[Question]
    answers: list[QuestionAnswer] | None = None
    reason: str | None = None
    question_id: str | None = None


class ToolErrorDetails(Wire, tag="error", tag_field="type"):
    """A call of any tool failed (its result has ``isError``); ``error`` says how."""

    error: ToolFailure


ToolDetails = (
    BashDetails
    | ReadDetails
    | ReadImageDetails
    | WriteDetails
    | EditDetails
    | UndoEditDetails
    | LsDetails
    | FindDetails
    | GrepDetails
    | TaskDetails
    | TodoDetails
    | WebFetchDetails
    | McpDetails
    | ReadNotebookDetails
    | NotebookEditDetails
    | ReadPdfDetails
    | WebSearchDetails
    | SkillDetails
    | LspDetails
    | ProcessDetails
    | ProcessListDetails
    | AskUserDetails
    | ToolErrorDetails
)
"""The details of one finished tool call, by ``type``."""
