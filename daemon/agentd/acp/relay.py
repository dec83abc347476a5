"""What the daemon sends the front-end, passed on to the editor in ACP terms.

- ``session/event`` → ``session/update`` notifications (through the session's
  :class:`~agentd.acp.updates.UpdateMapper`), in the order they arrive, so every update of a
  run reaches the editor before the ``session/prompt`` answer.
- ``session/requestPermission`` → ``session/request_permission`` with the four options
  (allow once / always, reject once / always) and a preview of the call (the edit's or the
  write's diff, the command); the editor's choice is the daemon's answer, a ``cancelled``
  (or malformed) answer is ``reject_once``. So approvals take the daemon's one approval path.
- ``fs/readTextFile`` / ``fs/writeTextFile`` → ``fs/read_text_file`` / ``fs/write_text_file``
  (asked only when the editor offered them in ``initialize``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import structlog

from agentd.acp.session import AcpSession
from agentd.acp.titles import absolute_path, native_kind_of, tool_kind, tool_title
from agentd.acp.toolcontent import proposed_content
from agentd.protocol import acp
from agentd.protocol.events import PermissionOption, SessionEvent
from agentd.protocol.methods import (
    OkResult,
    ReadTextFileParams,
    ReadTextFileResult,
    RequestPermissionParams,
    RequestPermissionResult,
    WriteTextFileParams,
)
from agentd.protocol.table import METHODS
from agentd.rpc import Connection, Router

log = structlog.get_logger("agentd.acp")
OPTION_NAMES: dict[PermissionOption, str] = {
    "allow_once": "Allow",
    "allow_always": "Always allow",
    "reject_once": "Reject",
    "reject_always": "Always reject",
}


class Relay:
    """Routes the daemon's notifications and requests to the editor connection."""

    def __init__(self, editor: Callable[[], Connection], sessions: dict[str, AcpSession]) -> None:
        self._editor = editor
        self._sessions = sessions

    def router(self) -> Router:
        """The native connection's router."""
        router = Router()
        router.on_notification("session/event", self.on_event, SessionEvent)
        for method, handler in (
            ("session/requestPermission", self.request_permission),
            ("fs/readTextFile", self.read_text_file),
            ("fs/writeTextFile", self.write_text_file),
        ):
            router.add(method, handler, METHODS[method].params)
        return router

    def on_event(self, conn: Connection, frame: SessionEvent) -> None:
        session = self._sessions.get(frame.session_id)
        if session is None:
            return
        editor = self._editor()
        for update in session.mapper.map(frame.event, frame.seq):
            editor.notify(
                "session/update",
                acp.SessionNotification(session_id=frame.session_id, update=update),
            )

    async def request_permission(
        self, conn: Connection, params: RequestPermissionParams
    ) -> RequestPermissionResult:
        session = self._sessions.get(params.session_id)
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
            content=proposed_content(params.tool, params.args, path) or None,
        )
        options = [
            acp.PermissionOption(option_id=option, name=OPTION_NAMES[option], kind=option)
            for option in params.options
        ]
        try:
            answer = await self._editor().request(
                "session/request_permission",
                acp.RequestPermissionParams(
                    session_id=params.session_id, tool_call=call, options=options
                ),
                result_type=acp.RequestPermissionResult,
            )
        except msgspec.ValidationError as exc:
            log.warning("malformed permission answer: refused", error=str(exc))
            return RequestPermissionResult(outcome="reject_once")
        outcome = answer.outcome
        if isinstance(outcome, acp.SelectedOutcome) and outcome.option_id in params.options:
            return RequestPermissionResult(outcome=outcome.option_id)
        return RequestPermissionResult(outcome="reject_once")

    async def read_text_file(self, conn: Connection, params: ReadTextFileParams) -> Any:
        answer = await self._editor().request(
            "fs/read_text_file",
            acp.ReadTextFileParams(session_id=params.session_id, path=params.path),
            result_type=acp.ReadTextFileResult,
        )
        return ReadTextFileResult(content=answer.content)

    async def write_text_file(self, conn: Connection, params: WriteTextFileParams) -> OkResult:
        await self._editor().request(
            "fs/write_text_file",
            acp.WriteTextFileParams(
                session_id=params.session_id, path=params.path, content=params.content
            ),
        )
        return OkResult()
