"""What the sessions send the front-end, passed on to the editor in ACP terms.

:class:`Relay` is the ACP front-end's :class:`~agentd.api.Subscriber` (and
:class:`~agentd.api.subscriber.FileServer`), given with every call that watches a session,
in-process and over ``--shared`` alike (:class:`~agentd.api.RemoteSessions` hands it what the
daemon sends):

- events → ``session/update`` notifications (through the session's
  :class:`~agentd.acp.updates.UpdateMapper`), in the order they arrive, so every update of a
  run reaches the editor before the ``session/prompt`` answer;
- permission requests → ``session/request_permission`` with the four options (allow once /
  always, reject once / always) and the daemon's preview of the call (an edit's or a write's
  whole-file diff, the command and its directory, the URL, the MCP call); the editor's choice
  is the answer, a malformed one ``reject_once``, and a ``cancelled`` outcome cancels the
  prompt turn (the spec's meaning: the user cancelled the turn, so nothing more is asked).
  So approvals take the sessions' one approval path;
- questions → ``elicitation/create`` or ``session/request_permission``
  (:mod:`agentd.acp.questions`);
- file reads and writes → ``fs/read_text_file`` / ``fs/write_text_file`` (only when the editor
  offered them in ``initialize``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import msgspec

from agentd.acp.questions import AcpQuestions
from agentd.acp.session import AcpSession
from agentd.acp.titles import absolute_path, native_kind_of, tool_kind, tool_title
from agentd.acp.toolcontent import permission_content
from agentd.api.subscriber import new_key
from agentd.log import get_logger
from agentd.protocol import acp
from agentd.protocol.events import PermissionOption, SettingsChanged, SubagentStart
from agentd.protocol.methods import (
    FileAccessCapabilities,
    OkResult,
    ReadTextFileParams,
    ReadTextFileResult,
    RequestPermissionParams,
    WriteTextFileParams,
)
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult
from agentd.rpc import Connection

if TYPE_CHECKING:
    from agentd.api.subscriber import Delivery

log = get_logger("agentd.acp")
OPTION_NAMES: dict[PermissionOption, str] = {
    "allow_once": "Allow",
    "allow_always": "Always allow (this session)",
    "reject_once": "Reject",
    "reject_always": "Always reject (this session)",
}
OPTION_KINDS: dict[PermissionOption, acp.PermissionOptionKind] = {
    "allow_once": "allow_once",
    "allow_always": "allow_always",
    "reject_once": "reject_once",
    "reject_always": "reject_always",
}
"""The options an ACP editor is offered (ACP has no kind for "always in this project")."""


class Relay:
    """Routes the sessions' events and requests to the editor connection."""

    def __init__(
        self,
        editor: Callable[[], Connection],
        sessions: dict[str, AcpSession],
        cancel_turn: Callable[[str], Coroutine[Any, Any, None]],
    ) -> None:
        """``cancel_turn(session_id)`` cancels the session's prompt turn (what a
        ``cancelled`` permission outcome means in ACP)."""
        self._editor = editor
        self._sessions = sessions
        self._cancel_turn = cancel_turn
        self._cancels: set[asyncio.Task[None]] = set()
        self.key = new_key()
        self.fs = FileAccessCapabilities()
        self.closed = False
        self.answers_permissions = True
        self.questions = AcpQuestions(editor)
        """Shows the sessions' questions (``questions.form``: the editor offered forms)."""
        self._parent_of: dict[str, str] = {}
        """A subagent's session id → the session whose task started it."""

    def deliver(self, item: Delivery) -> None:
        session = self._sessions.get(item.session_id)
        if session is None and item.session_id not in self._parent_of:
            return
        event = item.event().event
        if isinstance(event, SubagentStart):  # its requests go to this session's editor
            self._parent_of[event.child_session_id] = item.session_id
        if session is None:  # a subagent's own events are not the editor's session's
            return
        editor = self._editor()
        if isinstance(event, SettingsChanged):
            updates = session.apply(event)
        else:
            updates = session.mapper.map(event, item.seq)
        for update in updates:
            editor.notify(
                "session/update",
                acp.SessionNotification(session_id=item.session_id, update=update),
            )

    async def drained(self) -> None:
        """Until the editor connection's queue has drained (the
        :class:`~agentd.api.subscriber.Paced` contract: a ``session/load`` replay to the
        editor is paced by it)."""
        await self._editor().drained()

    async def request_permission(
        self, params: RequestPermissionParams, timeout: float
    ) -> PermissionOption | None:
        session_id = self.top_session(params.session_id)
        session = self._sessions.get(session_id)
        cwd = session.cwd if session is not None else "/"
        path = absolute_path(params.args.get("path"), cwd)
        kind = native_kind_of(params.tool)
        call = acp.ToolCallFields(
            tool_call_id=params.tool_call_id,
            title=tool_title(params.tool, params.args, cwd),
            kind=tool_kind(params.tool, params.args, kind),
            status="pending",
            locations=[acp.ToolCallLocation(path=path)] if path else None,
            raw_input=params.args,
            content=permission_content(params.tool, params.args, params.preview, path) or None,
        )
        options = [
            acp.PermissionOption(
                option_id=option, name=OPTION_NAMES[option], kind=OPTION_KINDS[option]
            )
            for option in params.options
            if option in OPTION_KINDS
        ]
        try:
            answer = await self._editor().request(
                "session/request_permission",
                acp.RequestPermissionParams(session_id=session_id, tool_call=call, options=options),
                result_type=acp.RequestPermissionResult,
            )
        except msgspec.ValidationError as exc:
            log.warning("malformed permission answer: refused", error=str(exc))
            return "reject_once"
        outcome = answer.outcome
        if isinstance(outcome, acp.CancelledOutcome):  # the editor cancelled the turn
            # In its own task: the cancel withdraws this very request (and waits for that),
            # which cancels this call, not the cancel.
            task = asyncio.get_running_loop().create_task(self._cancel_turn(session_id))
            self._cancels.add(task)
            task.add_done_callback(self._cancels.discard)
            await asyncio.shield(task)
            return None  # no answer: the cancel ended the wait
        offered = [option for option in params.options if option in OPTION_KINDS]
        if isinstance(outcome, acp.SelectedOutcome) and outcome.option_id in offered:
            return outcome.option_id
        return "reject_once"

    def answers_questions(self) -> bool:
        return not self.closed

    async def ask_question(
        self, params: AskQuestionParams, timeout: float
    ) -> AskQuestionResult | None:
        """The editor's user's answers (None: this editor cannot show them)."""
        return await self.questions.ask(params, self.top_session(params.session_id))

    def top_session(self, session_id: str) -> str:
        """The editor's session a (subagent's) session belongs to."""
        while session_id in self._parent_of:
            session_id = self._parent_of[session_id]
        return session_id

    def serves_files(self, *, write: bool) -> bool:
        """Whether the editor offered ``fs/write_text_file`` (or ``fs/read_text_file``)."""
        return not self.closed and (self.fs.write_text_file if write else self.fs.read_text_file)

    async def file_request(
        self, method: str, params: object, result_type: Any, timeout: float | None
    ) -> Any:
        """``fs/readTextFile`` / ``fs/writeTextFile`` as the editor's ``fs/*_text_file``."""
        editor = self._editor()
        if isinstance(params, ReadTextFileParams):
            answer = await editor.request(
                "fs/read_text_file",
                acp.ReadTextFileParams(
                    session_id=self.top_session(params.session_id), path=params.path
                ),
                result_type=acp.ReadTextFileResult,
                timeout=timeout,
            )
            return ReadTextFileResult(content=answer.content)
        if not isinstance(params, WriteTextFileParams):
            raise TypeError(f"not a file request: {method}")
        await editor.request(
            "fs/write_text_file",
            acp.WriteTextFileParams(
                session_id=self.top_session(params.session_id),
                path=params.path,
                content=params.content,
            ),
            timeout=timeout,
        )
        return OkResult()
