"""Custom commands on the wire: ``session/commands`` lists the prompt templates a session
offers (``/NAME`` in ``session/prompt``; see docs/commands.md)."""

from __future__ import annotations

from typing import Literal

import msgspec

from agentd.protocol.base import Params, Result


class SessionCommandsParams(Params):
    """``session/commands``: the custom commands of the session ``sessionId``, or (``cwd``
    instead) those a new session in ``cwd`` would have, for a chat not started yet. Exactly
    one of the two."""

    session_id: str | None = None
    cwd: str | None = None


class CommandInfo(Result):
    """One custom command: its ``name`` (typed as ``/name``), what it does, the hint for its
    arguments (None: it takes none worth naming) and where it was read from (``project``:
    the project's ``.agentd/commands/``, ``user``: ``$XDG_CONFIG_HOME/agentd/commands/``)."""

    name: str
    description: str
    argument_hint: str | None
    source: Literal["user", "project"]


class SessionCommandsResult(Result):
    """``session/commands``: the session's custom commands, by name, read again on every
    call; ``warnings``: the files that were skipped and why (an untrusted project's commands,
    a bad name, an invalid front matter)."""

    commands: list[CommandInfo]
    warnings: list[str] = msgspec.field(default_factory=list)
