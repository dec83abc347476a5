"""The arguments and results of the commands ``agentd lsp`` serves through
``workspace/executeCommand`` (each command takes one argument, an object).

Positions and ranges are LSP's (zero-based lines, columns in the negotiated position
encoding). Unknown members are refused (an invalid-params error), like every agentd method.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from agentd.protocol.events import RunStopReason

COMMANDS = ("agentd.prompt", "agentd.cancel", "agentd.newSession", "agentd.steer")
"""The command ids, as ``executeCommandProvider`` lists them."""

Line = Annotated[int, msgspec.Meta(ge=0)]


class LspPosition(msgspec.Struct, forbid_unknown_fields=True):
    """A position in a text document."""

    line: Line
    character: Line


class LspRange(msgspec.Struct, forbid_unknown_fields=True):
    """A range in a text document (``end`` exclusive)."""

    start: LspPosition
    end: LspPosition


class _Args(msgspec.Struct, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """Base of the command arguments."""


class PromptArgs(_Args):
    """``agentd.prompt``: run one turn. Without ``sessionId`` it runs in the session of the
    workspace folder holding ``uri`` (or of the first workspace folder), made on first use.
    ``uri`` and ``range`` tell the agent which file and code the prompt is about."""

    prompt: Annotated[str, msgspec.Meta(min_length=1)]
    uri: str | None = None
    range: LspRange | None = None
    session_id: str | None = None


class PromptAnswer(msgspec.Struct, rename="camel"):
    """What ``agentd.prompt`` answers when the turn ends: the final assistant text."""

    session_id: str
    stop_reason: RunStopReason
    text: str


class SessionArgs(_Args):
    """``agentd.cancel`` and ``agentd.newSession``: the session named, or the workspace
    session of ``uri`` (or of the first workspace folder)."""

    session_id: str | None = None
    uri: str | None = None


class CancelAnswer(msgspec.Struct, rename="camel"):
    """``agentd.cancel``: whether a run was going (it ends with ``cancelled``)."""

    session_id: str | None
    cancelled: bool


class NewSessionAnswer(msgspec.Struct, rename="camel"):
    """``agentd.newSession``: the new session, now the workspace folder's session."""

    session_id: str
    cwd: str


class SteerArgs(_Args):
    """``agentd.steer``: a message for the running turn of the session (as
    ``agentd.cancel`` picks it), seen by the model before its next step."""

    prompt: Annotated[str, msgspec.Meta(min_length=1)]
    session_id: str | None = None
    uri: str | None = None


class SteerAnswer(msgspec.Struct, rename="camel"):
    """``agentd.steer``: the session the message went to."""

    session_id: str
