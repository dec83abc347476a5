"""Params and results of the requests the daemon sends to clients:
``session/requestPermission``, ``fs/readTextFile``, ``fs/writeTextFile`` (re-exported by
:mod:`agentd.protocol.methods`)."""

from __future__ import annotations

from typing import Any

from agentd.protocol.approval import ApprovalPreview
from agentd.protocol.base import Params, Result
from agentd.protocol.events import PermissionOption


class RequestPermissionParams(Result):
    """``session/requestPermission`` (server → client): approve a tool call.

    ``preview`` and ``always_rule`` as on the ``permission_request`` event; here the preview
    also carries the whole file texts (``oldText``/``newText``) of a small file."""

    session_id: str
    tool_call_id: str
    tool: str
    args: dict[str, Any]
    options: list[PermissionOption]
    preview: ApprovalPreview | None = None
    always_rule: str | None = None


class RequestPermissionResult(Params):
    """The client's answer: one of the offered options."""

    outcome: PermissionOption


class ReadTextFileParams(Result):
    """``fs/readTextFile`` (server → client): the text of ``path`` as the client holds it
    (an editor: the buffer, unsaved changes included). ``path`` is absolute."""

    session_id: str
    path: str


class ReadTextFileResult(Params):
    """The file's whole text; ``null`` when the client holds no text of it (an editor without
    a buffer of the file): the daemon reads the disk."""

    content: str | None


class WriteTextFileParams(Result):
    """``fs/writeTextFile`` (server → client): replace the text of ``path`` (absolute),
    creating the file if needed."""

    session_id: str
    path: str
    content: str


class WriteTextFileResult(Result):
    """The client's answer to ``fs/writeTextFile`` (``{}`` and ``{"ok": true}`` also mean
    written). ``written: false``: the client did not take the write (an editor that edits only
    the files it has open, say); the daemon writes the disk itself."""

    ok: bool = True
    written: bool = True
