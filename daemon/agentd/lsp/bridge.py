"""What the sessions ask of the editor, in LSP terms: :class:`Bridge` is ``agentd lsp``'s
:class:`~agentd.api.Subscriber` and :class:`~agentd.api.subscriber.FileServer`, given with
every call that watches a session (in-process and over ``--shared`` alike).

- events → the running prompt of their session (:mod:`agentd.lsp.runs`: progress reports);
- permission requests → ``window/showMessageRequest`` with ``Allow once``, ``Allow always``
  and ``Reject``, the message naming the tool and its input (control characters escaped); a
  dismissed message refuses;
- questions → one ``window/showMessageRequest`` per question, its options as the buttons
  (:mod:`agentd.lsp.questions`);
- file reads → the editor's open buffer (unsaved text), or the disk (``content: null``);
- file writes (``write``, ``edit``, ``undo_edit``) → ``workspace/applyEdit`` when the editor
  applies edits: on an open file a versioned edit, on any other file when the editor takes
  ``documentChanges`` (a new one when it may create files); ``applied: false`` fails the
  tool with the editor's reason. What the editor cannot take goes to the disk.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentd.api.subscriber import new_key
from agentd.errors import RpcError
from agentd.log import get_logger
from agentd.lsp.editor import Editor, Written
from agentd.lsp.edits import create_edit, replace_edit
from agentd.lsp.questions import ask_in_messages
from agentd.protocol.controls import escape_controls
from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import (
    ReadTextFileParams,
    ReadTextFileResult,
    RequestPermissionParams,
    WriteTextFileParams,
    WriteTextFileResult,
)
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult

if TYPE_CHECKING:
    from agentd.api.subscriber import Delivery
    from agentd.protocol.events import Event

log = get_logger("agentd.lsp")

ACTIONS: dict[str, PermissionOption] = {
    "Allow once": "allow_once",
    "Allow always": "allow_always",
    "Reject": "reject_once",
}
"""The buttons of an approval, in order, and the answer each gives."""
INPUT_SHOWN = 300
"""Characters of a tool's input an approval message shows at most."""


class EditRefused(RpcError):
    """The editor answered ``applied: false``: the tool fails with its reason."""

    code = -32603


class Bridge:
    """Routes the sessions' events and requests to the editor (see the module docstring)."""

    def __init__(self, editor: Editor, route: Callable[[str, Event], None]) -> None:
        self.editor = editor
        self._route = route
        self.key = new_key()
        self.closed = False
        self.answers_permissions = True

    def deliver(self, item: Delivery) -> None:
        self._route(item.session_id, item.event().event)

    async def request_permission(
        self, params: RequestPermissionParams, timeout: float
    ) -> PermissionOption | None:
        """Ask with ``window/showMessageRequest``; no button chosen refuses. The session
        cancels this when its approval timeout passes (the call is then refused). The
        message shows control characters and bidi overrides as visible escapes (``\\x1b``,
        ``\\u202e``): editors in a terminal print it, and the command asked about must be
        the one that runs."""
        offered = [title for title, option in ACTIONS.items() if option in params.options]
        message = {
            "type": 3,
            "message": escape_controls(
                f"agentd wants to run {params.tool}: {approval_text(params)}", crlf=False
            ),
            "actions": [{"title": title} for title in offered],
        }
        answer = await self.editor.request("window/showMessageRequest", message)
        title = getattr(answer, "title", None)
        return ACTIONS.get(title, "reject_once") if title in offered else "reject_once"

    def answers_questions(self) -> bool:
        return not self.closed

    async def ask_question(
        self, params: AskQuestionParams, timeout: float
    ) -> AskQuestionResult | None:
        """One message per question (:func:`agentd.lsp.questions.ask_in_messages`)."""
        return await ask_in_messages(self.editor.request, params)

    def serves_files(self, *, write: bool) -> bool:
        """Reads always (open buffers, else the disk); writes when edits can be applied."""
        return not self.closed and (not write or self.editor.applies_edits())

    async def file_request(
        self, method: str, params: object, result_type: Any, timeout: float | None
    ) -> Any:
        if isinstance(params, ReadTextFileParams):
            return ReadTextFileResult(content=self.editor.text_of(params.path))
        if not isinstance(params, WriteTextFileParams):
            raise TypeError(f"not a file request: {method}")
        written = await self.write(Path(params.path), params.content)
        return WriteTextFileResult(written=written)

    async def write(self, path: Path, text: str) -> bool:
        """Write ``text`` through ``workspace/applyEdit``; False when the editor cannot take
        this write (the disk is used), :class:`EditRefused` when it refuses it."""
        editor = self.editor
        uri = editor.uri_of(path)
        document = editor.document(path)
        encoding = editor.position_encoding()
        changes = editor.document_changes()
        if document is not None:
            version = editor.known_version(path)
            old = editor.text_of(path) or ""
            edit = replace_edit(
                uri,
                old,
                text,
                version=version,
                document_changes=changes,
                encoding=encoding,
            )
        elif path.exists() and changes:
            held = editor.text_of(path)
            if held is None:
                held = await asyncio.to_thread(path.read_text, "utf-8", "surrogateescape")
            old = held
            edit = replace_edit(uri, old, text, version=None, document_changes=True)
        elif not path.exists() and editor.creates_files():
            edit = create_edit(uri, text)
        else:
            return False
        if edit is not None:
            await self._apply(path, edit)
        version = document.version if document is not None else None
        editor.written[uri] = Written(version, text)
        return True

    async def _apply(self, path: Path, edit: dict[str, Any]) -> None:
        params = {"label": f"agentd: {path.name}", "edit": edit}
        result = await self.editor.request("workspace/applyEdit", params)
        if not getattr(result, "applied", False):
            reason = getattr(result, "failure_reason", None) or "the editor did not apply it"
            log.info("edit refused by the editor", path=str(path), reason=reason)
            raise EditRefused(f"edit not applied: {reason}")


def approval_text(params: RequestPermissionParams) -> str:
    """The tool's input as an approval shows it: the command, the path, or the arguments."""
    args = params.args
    for key in ("command", "path", "url", "pattern"):
        value = args.get(key)
        if isinstance(value, str):
            shown = value
            break
    else:
        shown = json.dumps(args, ensure_ascii=False)
    return shown if len(shown) <= INPUT_SHOWN else shown[: INPUT_SHOWN - 1] + "…"
