"""The commands of ``agentd lsp`` over the session API: ``agentd.prompt``,
``agentd.cancel``, ``agentd.newSession`` and ``agentd.steer`` (arguments and answers:
:mod:`agentd.protocol.lsp`).

Each workspace folder has one session, made on first use (``agentd.newSession`` replaces
it); a command naming ``sessionId`` uses that session instead (one of the shared daemon's,
with ``--shared``). A prompt's run is followed through the :class:`~agentd.lsp.bridge.Bridge`
and reported as ``$/progress``; when the request is cancelled (``$/cancelRequest``) the run
is cancelled too, and ``agentd.cancel`` ends it with ``cancelled``.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import to_fs_path

from agentd.errors import InvalidParams, SessionBusy
from agentd.frontend import FrontEndOptions, open_sessions
from agentd.log import get_logger
from agentd.lsp.bridge import Bridge
from agentd.lsp.edits import offset_at
from agentd.lsp.progress import ProgressReporter
from agentd.lsp.runs import Run
from agentd.protocol.lsp import (
    CancelAnswer,
    NewSessionAnswer,
    PromptAnswer,
    PromptArgs,
    SessionArgs,
    SteerAnswer,
    SteerArgs,
)
from agentd.protocol.methods import (
    FileAccessCapabilities,
    PromptParams,
    SessionIdParams,
    SessionTextParams,
)

if TYPE_CHECKING:
    from agentd.api import SessionApi
    from agentd.frontend import Close
    from agentd.lsp.editor import Editor
    from agentd.protocol.events import Event

log = get_logger("agentd.lsp")
_tokens = itertools.count(1)


class Front:
    """The sessions of one editor connection and the commands on them."""

    def __init__(self, options: FrontEndOptions, editor: Editor) -> None:
        self.options = options
        self.editor = editor
        self.bridge = Bridge(editor, self._route)
        self.sessions: dict[str, str] = {}
        """Workspace folder → its session id."""
        self.runs: dict[str, Run] = {}
        self._api: SessionApi | None = None
        self._close: Close | None = None
        self._opening = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()

    async def api(self) -> SessionApi:
        """The session API, opened on first use (after ``initialize``)."""
        async with self._opening:
            if self._api is None:
                fs = FileAccessCapabilities(
                    read_text_file=True, write_text_file=self.editor.applies_edits()
                )
                opened = await open_sessions(self.options, "agentd-lsp", fs)
                self._api, self._close = opened.api, opened.close
            return self._api

    async def close(self) -> None:
        """Stop the runs of this editor and close the session API."""
        self.bridge.closed = True
        close, self._close, self._api = self._close, None, None
        if close is not None:
            await close()

    # --- the commands ---------------------------------------------------------------------

    async def prompt(self, args: PromptArgs, token: int | str | None) -> PromptAnswer:
        """Run one turn; the answer when it ends (see the module docstring)."""
        api = await self.api()
        session_id = args.session_id or await self._workspace_session(args.uri)
        if session_id in self.runs:
            raise SessionBusy(f"a prompt is running in session {session_id}; use agentd.steer")
        run = self.runs[session_id] = Run(session_id, self.editor, None)
        stop = "error"
        try:
            run.progress = progress = await self._progress(token)
            if progress is not None:
                progress.begin("agentd", args.prompt.splitlines()[0][:80])
            params = PromptParams(session_id=session_id, text=self._prompt_text(args))
            result = await api.prompt(params, self.bridge)
            stop = result.stop_reason
        except asyncio.CancelledError:
            stop = "cancelled"
            self._background(api.cancel(SessionIdParams(session_id=session_id)))
            raise
        finally:
            del self.runs[session_id]
            if run.progress is not None:
                await run.progress.end(stop)
        return PromptAnswer(session_id=session_id, stop_reason=result.stop_reason, text=run.text)

    async def cancel(self, args: SessionArgs) -> CancelAnswer:
        """Cancel the session's run (the prompt answers ``cancelled``)."""
        api = await self.api()
        session_id = args.session_id or self.sessions.get(self.root_for(args.uri))
        if session_id is None:
            return CancelAnswer(session_id=None, cancelled=False)
        result = await api.cancel(SessionIdParams(session_id=session_id))
        return CancelAnswer(session_id=session_id, cancelled=result.cancelled)

    def cancel_progress(self, token: int | str) -> None:
        """``window/workDoneProgress/cancel``: cancel the run reporting on ``token``."""
        for run in self.runs.values():
            if run.progress is not None and run.progress.token == token and self._api:
                self._background(self._api.cancel(SessionIdParams(session_id=run.session_id)))
                return
        log.info("progress cancel for no running prompt", token=str(token))

    async def new_session(self, args: SessionArgs) -> NewSessionAnswer:
        """A new session for the workspace folder of ``uri`` (it becomes its session)."""
        root = self.root_for(args.uri)
        session_id = await self._create(root)
        return NewSessionAnswer(session_id=session_id, cwd=root)

    async def steer(self, args: SteerArgs) -> SteerAnswer:
        """Send ``prompt`` to the session's running turn."""
        api = await self.api()
        session_id = args.session_id or self.sessions.get(self.root_for(args.uri))
        if session_id is None:
            raise InvalidParams("no agentd session runs in this workspace")
        await api.steer(SessionTextParams(session_id=session_id, text=args.prompt))
        return SteerAnswer(session_id=session_id)

    # --- helpers --------------------------------------------------------------------------

    def root_for(self, uri: str | None) -> str:
        """The workspace folder holding ``uri`` (the deepest), else the first folder (or
        root), else the folder of ``uri``, else this process's working directory."""
        paths = [_path_of(f.uri) for f in self.editor.server.workspace.folders.values()]
        folders = [f for f in paths if f]
        path = _path_of(uri) if uri else None
        if path is not None:
            holding = [f for f in folders if path == f or path.startswith(f.rstrip("/") + "/")]
            if holding:
                return max(holding, key=len)
        root = self.editor.server.workspace.root_path
        if folders:
            return folders[0]
        if root:
            return str(root)
        if path is not None:
            return str(Path(path).parent)
        return str(Path.cwd())

    async def _workspace_session(self, uri: str | None) -> str:
        root = self.root_for(uri)
        session_id = self.sessions.get(root)
        return session_id if session_id is not None else await self._create(root)

    async def _create(self, root: str) -> str:
        api = await self.api()
        info = await api.create(self.options.new_session(root), self.bridge)
        self.sessions[root] = info.session_id
        log.info("session made for the workspace", session_id=info.session_id, cwd=root)
        return info.session_id

    async def _progress(self, token: int | str | None) -> ProgressReporter | None:
        """The prompt's progress: on the request's token, or on one made with
        ``window/workDoneProgress/create`` when the editor supports it, else none."""
        if token is None and self.editor.creates_progress():
            token = f"agentd-{next(_tokens)}"
            try:
                await self.editor.request("window/workDoneProgress/create", {"token": token})
            except Exception as exc:  # the editor refused: no progress then
                log.info("progress token refused", error=str(exc))
                return None
        return None if token is None else ProgressReporter(self.editor.notify, token)

    def _prompt_text(self, args: PromptArgs) -> str:
        """The prompt, with where it points: the file and the selected code."""
        if args.uri is None:
            return args.prompt
        path = _path_of(args.uri) or args.uri
        if args.range is None:
            return f"{args.prompt}\n\n(File: {path})"
        start, end = args.range.start, args.range.end
        where = f"{path}, lines {start.line + 1}-{end.line + 1}"
        text = self.editor.text_of(path) if _path_of(args.uri) else None
        if text is None:
            return f"{args.prompt}\n\n(File: {where})"

        encoding = self.editor.position_encoding()
        first = offset_at(text, start.line, start.character, encoding)
        last = offset_at(text, end.line, end.character, encoding)
        return f"{args.prompt}\n\n(File: {where})\n```\n{text[first:last]}\n```"

    def _route(self, session_id: str, event: Event) -> None:
        run = self.runs.get(session_id)
        if run is not None:
            run.see(event)

    def _background(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _path_of(uri: str | None) -> str | None:
    """The file system path of a ``file:`` URI (None for other schemes)."""
    if not uri or not uri.startswith("file:"):
        return None

    return to_fs_path(uri)
