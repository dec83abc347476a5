"""File access through a session's clients: the :class:`~agentd.tools.base.FileAccess` that
the daemon hands to the file tools.

A client that declared ``fs.readTextFile`` / ``fs.writeTextFile`` in ``initialize`` (an editor:
``agentd acp`` for ACP editors) serves the server → client requests ``fs/readTextFile`` and
``fs/writeTextFile`` for the sessions it watches, so the tools see unsaved buffers and edits
land in the editor. The first subscribed connection with the capability serves each call;
with none, the tools use the disk (and the runtime takes this hook out of the tool context
altogether while no subscriber declared ``fs``: :meth:`ClientFiles.available`); so does a
call the client declines (a read answered with ``content: null``, a write with
``written: false``). A client's
error becomes the tool's error (text for the model); a client that goes away mid-call falls
back to the disk — beneath the workspace in a sandboxed session, as without an editor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from agentd.api.subscriber import FileServer
from agentd.errors import ConnectionLost, PeerTimeout, RpcError
from agentd.log import get_logger
from agentd.protocol.methods import (
    ReadTextFileParams,
    ReadTextFileResult,
    WriteTextFileParams,
    WriteTextFileResult,
)
from agentd.tools.base import ToolError

if TYPE_CHECKING:
    from agentd.api.subscriber import Subscriber

log = get_logger("agentd.files")

FILE_TIMEOUT = 30.0
"""Seconds a client may take to answer one file request."""


class ClientFiles:
    """Reads and writes through the first capable client among ``subscribers()``."""

    def __init__(self, session_id: str, subscribers: Callable[[], Iterable[Subscriber]]) -> None:
        self.session_id = session_id
        self._subscribers = subscribers

    def available(self) -> bool:
        """Whether a subscribed client declared ``fs`` (reads or writes)."""
        return any(
            isinstance(subscriber, FileServer)
            and (subscriber.serves_files(write=False) or subscriber.serves_files(write=True))
            for subscriber in self._subscribers()
        )

    def _client(self, *, write: bool) -> FileServer | None:
        """The first subscribed client that serves this kind of call."""
        for subscriber in self._subscribers():
            if isinstance(subscriber, FileServer) and subscriber.serves_files(write=write):
                return subscriber
        return None

    async def read_text(self, path: Path) -> str | None:
        conn = self._client(write=False)
        if conn is None:
            return None
        params = ReadTextFileParams(session_id=self.session_id, path=str(path))
        result = await self._call(conn, "fs/readTextFile", params, ReadTextFileResult, path)
        return None if result is None else result.content

    async def write_text(self, path: Path, text: str) -> bool | None:
        conn = self._client(write=True)
        if conn is None:
            return None
        params = WriteTextFileParams(session_id=self.session_id, path=str(path), content=text)
        result_type = WriteTextFileResult | None
        result = await self._call(conn, "fs/writeTextFile", params, result_type, path)
        if result is None or (isinstance(result, WriteTextFileResult) and not result.written):
            return None
        return True

    async def _call(
        self, conn: FileServer, method: str, params: object, result_type: Any, path: Path
    ) -> Any:
        """The client's answer (``True`` for an empty one), None when the client went away;
        ToolError when it refused."""
        try:
            result = await conn.file_request(method, params, result_type, FILE_TIMEOUT)
        except (ConnectionLost, PeerTimeout) as exc:
            log.info("file request not answered; using the disk", method=method, error=str(exc))
            return None
        except RpcError as exc:
            verb = "read" if method == "fs/readTextFile" else "write"
            raise ToolError(f"The editor could not {verb} {path}: {exc.message}") from None
        except msgspec.ValidationError as exc:
            raise ToolError(f"The editor answered {method} wrongly: {exc}") from None
        return True if result is None else result
