"""ACP elicitation (``elicitation/create``, agent → client): the editor asks its user a
form, tied to a session (and a tool call). Offered by editors that declare
``clientCapabilities.elicitation.form``; the form's schema is flat and primitive-only
(:mod:`agentd.protocol.question_forms` makes it)."""

from __future__ import annotations

from typing import Any

from agentd.protocol.acp.base import Acp, Supported


class ElicitationCapabilities(Acp):
    """The elicitation modes the editor supports (``{}`` for a mode: supported)."""

    form: Supported | None = None
    url: Supported | None = None


class CreateElicitationParams(Acp, kw_only=True):
    """``elicitation/create`` in form mode, scoped to a session (and a tool call)."""

    session_id: str
    tool_call_id: str | None = None
    mode: str
    message: str
    requested_schema: dict[str, Any]


class CreateElicitationResult(Acp, kw_only=True):
    """The editor's answer: ``accept`` (with ``content``), ``decline`` or ``cancel``."""

    action: str
    content: dict[str, Any] | None = None
