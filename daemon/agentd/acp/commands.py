"""Custom commands for the editor: ACP ``available_commands_update``.

The built-in commands (:mod:`agentd.acp.builtins`) and the session's custom commands
(``session/commands``) are sent after ``session/new``, ``session/load`` and ``session/fork``
(once their answer is out), and again whenever the list differs from the one last sent:
after every prompt turn, and on a poll every :data:`POLL_SECONDS` while sessions are open.
``session/commands`` reads the command files each time (a few small files) without loading
an unloaded session, so an edit shows in the editor within a poll. An editor invokes a
command by sending a prompt whose text starts with ``/name``; agentd expands it (see
docs/commands.md).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from agentd.acp.builtins import with_builtins
from agentd.api import SessionApi
from agentd.errors import RpcError
from agentd.protocol import acp
from agentd.protocol.commands import SessionCommandsParams, SessionCommandsResult

POLL_SECONDS = 2.0
"""How often the open sessions' command lists are compared with the ones sent."""
NONE = acp.AvailableCommandsUpdate(available_commands=[])


def available_commands(listed: SessionCommandsResult) -> acp.AvailableCommandsUpdate:
    """The ACP update for a ``session/commands`` answer, after the built-ins."""
    return acp.AvailableCommandsUpdate(
        available_commands=with_builtins(
            [
                acp.AvailableCommand(
                    name=command.name,
                    description=command.description,
                    input=acp.UnstructuredCommandInput(hint=command.argument_hint)
                    if command.argument_hint
                    else None,
                )
                for command in listed.commands
            ]
        )
    )


class CommandAnnouncer:
    """Sends each open session's commands to the editor when they are new or changed."""

    def __init__(
        self,
        api: Callable[[], Awaitable[SessionApi]],
        notify: Callable[[str, acp.AvailableCommandsUpdate], None],
        open_sessions: Callable[[], list[str]],
    ) -> None:
        self._api = api
        self._notify = notify
        self._open_sessions = open_sessions
        self._sent: dict[str, acp.AvailableCommandsUpdate] = {}
        self._poll: asyncio.Task[None] | None = None

    async def refresh(self, session_id: str) -> None:
        """Send the session's commands unless the editor has this very list already, and
        keep polling while sessions are open."""
        await self._check(session_id)
        if self._poll is None or self._poll.done():
            self._poll = asyncio.get_running_loop().create_task(self._polling())

    def forget(self, session_id: str) -> None:
        """The session was closed: nothing more is sent for it."""
        self._sent.pop(session_id, None)

    async def _check(self, session_id: str) -> None:
        """Compare and send; a session that went away meanwhile (or a daemon that did) is
        skipped silently."""
        with contextlib.suppress(RpcError, OSError):
            api = await self._api()
            listed = await api.commands(SessionCommandsParams(session_id=session_id))
            update = available_commands(listed)
            before = self._sent.get(session_id, NONE)  # an editor starts with none
            if session_id in self._open_sessions() and before != update:
                self._sent[session_id] = update
                self._notify(session_id, update)

    async def _polling(self) -> None:
        while self._open_sessions():
            await asyncio.sleep(POLL_SECONDS)
            for session_id in self._open_sessions():
                await self._check(session_id)

    async def close(self) -> None:
        """Stop polling."""
        if self._poll is not None:
            self._poll.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poll
