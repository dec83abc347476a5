"""The tool contract: every tool is a small class with a ``Params`` Struct and ``run``.

A tool's ``Params`` JSON Schema (``msgspec.json.schema``) *is* the schema sent to the LLM.
``run`` returns a :class:`ToolResult` or raises :class:`ToolError` with text written for the
model (what went wrong and what to do instead); the loop turns that into an error result and
goes on. Cancellation is plain ``asyncio`` task cancellation: tools clean up in ``finally``.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

import msgspec

from agentd.protocol.content import Usage, UserContent
from agentd.protocol.events import Event, Location, RunStopReason, ToolKind
from agentd.protocol.lsp_details import LspDiagnostic
from agentd.protocol.questions import Question, QuestionResolved, QuestionSource
from agentd.protocol.tool_details import ToolDetails
from agentd.tools.defaults import ToolSettings
from agentd.toolspec import ToolSpec

if TYPE_CHECKING:
    from agentd.tools.process.table import ProcessTable


class ToolError(Exception):
    """A tool refused or failed; ``str(error)`` is shown to the model as an error result."""


class ToolResult(msgspec.Struct):
    """What a tool returns.

    ``output`` is the text (or content blocks, e.g. an image) the model sees; ``details`` is
    the tool's typed report for UIs (:mod:`agentd.protocol.tool_details`: paths, diff, exit
    code, duration, truncated…), never sent to the model. ``is_error`` marks a result the
    model should treat as a failure (bash exit codes are *not* errors). ``events`` are emitted
    by the loop just before the call's ``tool_execution_end`` (``todo``: its ``plan_update``).
    """

    output: str | list[UserContent]
    details: ToolDetails | None = None
    is_error: bool = False
    events: list[Event] = msgspec.field(default_factory=list)


def _no_update(_delta: str) -> None:
    return None


class WorkingDirectory:
    """The one working directory of a session's tool calls (see :attr:`ToolContext.cwd`)."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path


class ToolPorts:
    """What a session's tools call besides the disk, given when the session is built and
    never replaced: ``files`` (the user's editor, see :class:`FileAccess`), ``changes`` (told
    of every file change, see :class:`FileChanges`), ``subagents`` (child sessions for the
    ``task`` tool), ``path_locks`` (per-file locks shared by a session and its subagents),
    ``processes`` (the session's background processes, a
    :class:`~agentd.tools.process.table.ProcessTable`), ``questions`` (the users behind the
    session's clients, see :class:`Questions`) and ``language_servers`` (the ``lsp`` tool and
    the diagnostics after a change, see :class:`LanguageServers`). None: the session has no
    such port."""

    __slots__ = (
        "changes", "files", "language_servers", "path_locks", "processes", "questions",
        "subagents",
    )  # fmt: skip

    def __init__(
        self,
        *,
        files: FileAccess | None = None,
        changes: FileChanges | None = None,
        subagents: Subagents | None = None,
        path_locks: PathLocks | None = None,
        processes: ProcessTable | None = None,
        questions: Questions | None = None,
        language_servers: LanguageServers | None = None,
    ) -> None:
        self.questions = questions
        self.files = files
        self.changes = changes
        self.subagents = subagents
        self.path_locks = path_locks
        self.processes = processes
        self.language_servers = language_servers


class ToolContext:
    """Per-session state handed to every tool call: what is fixed for the session, and the
    :class:`ToolPorts` its tools call.

    Fixed: ``cwd`` is the session's working directory: one :class:`WorkingDirectory` shared
    by the session's context and every call's view of it (:meth:`for_call`). bash moves it
    when a command changes directory, so the calls after it (also later calls of the same
    reply) start there; nothing copies it back. ``workspace`` is set when the session is
    sandboxed to that root. ``redact`` replaces secrets in text that tools write to disk
    themselves (bash spill files). ``settings`` holds the session's limits and tool
    environment (:mod:`agentd.tools.defaults`). ``state`` is per-session storage that tools
    own (edit history for undo, read stamps for stale-file checks), keyed by tool name.

    Ports (``ports``, or the keyword arguments of the same names): ``files`` routes read,
    write and edit through the user's editor; ``changes``, ``subagents`` and ``path_locks``
    as :class:`ToolPorts` says. Per call: ``on_update`` receives streamed output deltas
    (bash), ``tool_call_id`` names the call (:meth:`for_call`).
    """

    def __init__(
        self,
        cwd: Path,
        session_id: str = "",
        workspace: Path | None = None,
        spill_dir: Path | None = None,
        env: dict[str, str] | None = None,
        on_update: Callable[[str], None] = _no_update,
        state: dict[str, Any] | None = None,
        settings: ToolSettings | None = None,
        redact: Callable[[str], str] | None = None,
        files: FileAccess | None = None,
        subagents: Subagents | None = None,
        path_locks: PathLocks | None = None,
        *,
        ports: ToolPorts | None = None,
    ) -> None:
        self._cwd = WorkingDirectory(cwd)
        self.session_id = session_id
        self.workspace = workspace
        self.spill_dir = spill_dir
        self.env = env
        self.on_update = on_update
        self.state: dict[str, Any] = {} if state is None else state
        self.settings = ToolSettings() if settings is None else settings
        self.redact = redact
        if ports is None:
            ports = ToolPorts(files=files, subagents=subagents, path_locks=path_locks)
        self.ports = ports
        self.tool_call_id = ""

    @property
    def files(self) -> FileAccess | None:
        return self.ports.files

    @property
    def changes(self) -> FileChanges | None:
        return self.ports.changes

    @property
    def subagents(self) -> Subagents | None:
        return self.ports.subagents

    @property
    def path_locks(self) -> PathLocks | None:
        return self.ports.path_locks

    @property
    def processes(self) -> ProcessTable | None:
        return self.ports.processes

    @property
    def cwd(self) -> Path:
        """The session's working directory now."""
        return self._cwd.path

    @cwd.setter
    def cwd(self, path: Path) -> None:
        self._cwd.path = path

    def for_call(self, on_update: Callable[[str], None], tool_call_id: str = "") -> ToolContext:
        """This context for one call: its own ``on_update`` and ``tool_call_id``; the working
        directory, ``state`` and ``settings`` are the session's own (shared, not copied)."""
        view = copy.copy(self)
        view.on_update = on_update
        view.tool_call_id = tool_call_id
        return view


class FileAccess(Protocol):
    """Text files as the user's editor holds them: unsaved changes are seen, writes land in
    the editor (and its undo history). The file tools use it when the session has one, and the
    disk otherwise. ``path`` is absolute and already checked by :func:`resolve_path`.

    Both methods return None when no client can serve the call right now (then the tool uses
    the disk) and raise :class:`ToolError` when the client refuses it.
    """

    async def read_text(self, path: Path) -> str | None:
        """The whole text of ``path``, or None (use the disk)."""
        ...

    async def write_text(self, path: Path, text: str) -> bool | None:
        """Replace the text of ``path`` (creating the file); True when written, None: use the
        disk."""
        ...


class Questions(Protocol):
    """Asks the user behind the session's clients (:class:`agentd.session.questions.
    Questioner`): the ``question_resolved`` of the questions, with the answers, or without
    them and why (nobody can answer: at once; the time ran out; declined). Raises only
    CancelledError."""

    async def ask(
        self,
        questions: list[Question],
        *,
        source: QuestionSource = "tool",
        tool_call_id: str | None = None,
        server: str | None = None,
        url: str | None = None,
    ) -> QuestionResolved: ...


class FileChanges(Protocol):
    """Where the tools report the files they change (the session keeps them for
    ``session/rewind``). write, edit and undo_edit call :meth:`changed` after each change;
    bash runs its command inside :meth:`watching` (unless the command certainly only reads,
    :mod:`agentd.tools.shellparse.readonly`), which finds the files it created or changed.
    Neither raises: a change that cannot be kept is recorded as such."""

    async def changed(self, path: Path, before: bytes | None, after: bytes | None) -> None:
        """``path`` (absolute) held ``before`` and now holds ``after`` (None: no file)."""
        ...

    def watching(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Look for the files a command changes while this is held."""
        ...


class LanguageServers(Protocol):
    """The project's language servers as the tools use them (``agentd.langserver``, made by
    the session layer; nothing of it is imported before a file of a served language needs
    it)."""

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        """One ``lsp`` call (``params``: the tool's :class:`~agentd.tools.lsp.LspParams`)."""
        ...

    async def rename_plan(self, params: Any, ctx: ToolContext) -> list[tuple[Path, str, str]]:
        """The files an ``lsp`` rename would change: (path, text before, text after) each,
        for the approval's preview; ToolError when it cannot be made."""
        ...

    async def changed(
        self, path: Path, before: bytes | None, after: bytes | None, ctx: ToolContext
    ) -> list[LspDiagnostic] | None:
        """The problems the change of ``path`` from ``before`` to ``after`` introduced, as the
        file's language server sees them (None: no server serves it, or none answered)."""
        ...

    async def opened(self, path: Path, ctx: ToolContext) -> None:
        """The agent read ``path``: open it in its language's server if one is running (never
        starting one); never raises."""
        ...


class TaskRequest(msgspec.Struct, frozen=True):
    """A ``task`` call as the session layer gets it: what to do and with which profile."""

    description: str
    prompt: str
    agent: str
    tool_call_id: str


class TaskOutcome(msgspec.Struct, frozen=True):
    """How a subagent's run ended: its final text, its session and what it spent.

    ``usage`` is the child's run usage; ``stop_reason`` its run's stop reason; ``error`` set
    when the run failed."""

    text: str
    child_session_id: str
    agent: str
    stop_reason: RunStopReason
    usage: Usage
    cost: float
    turns: int
    error: str | None = None


class Subagents(Protocol):
    """What the ``task`` tool needs from the session layer: a way to run one child session
    to its end (cancelling the call cancels the child)."""

    async def run_task(self, request: TaskRequest) -> TaskOutcome:
        """Run a child session on ``request`` and return how it ended; raise
        :class:`ToolError` when it cannot start (an unknown profile, too deep)."""
        ...


class PathLocks(Protocol):
    """Per-file locks shared by a session and its subagents (see
    :class:`agentd.tools.files.locks.FileLocks`)."""

    def hold(self, path: Path, holder: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold ``path``'s lock (waiting for another holder); ToolError when it waits too
        long."""
        ...


P = TypeVar("P", bound=msgspec.Struct)
"""A tool's own ``Params`` Struct."""


class ToolOf(Protocol[P]):
    """What the agent loop needs from a tool whose arguments decode to its ``Params`` Struct.

    ``run`` and ``locations`` take that Struct, already validated; code that holds tools of
    every kind sees a :data:`Tool` and hands them what ``Params`` decoded.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    kind: ClassVar[ToolKind]
    mutating: ClassVar[bool]

    @property
    def Params(self) -> type[P]:
        """The arguments' Struct; its JSON Schema is what the model is given."""
        ...

    async def run(self, params: P, ctx: ToolContext) -> ToolResult:
        """Run the call. Raise ToolError for failures the model should read."""
        ...

    def locations(self, params: P, ctx: ToolContext) -> list[Location]:
        """Files (and lines) this call touches, for editors; may be empty."""
        ...


Tool = ToolOf[Any]
"""A tool of any kind, as a registry or the agent loop holds it."""


class Toolset(msgspec.Struct, frozen=True):
    """A session's tools by name and the specs the model is given for them, built together
    (``agentd.tools.toolset``) so the two never disagree."""

    by_name: dict[str, Tool]
    specs: list[ToolSpec]
