"""One live MCP server: its transport, its tools, its calls.

Each :class:`Connection` has an *owner* task that opens its transport (``initialize``), lists
the tools and holds the transport open until :meth:`Connection.stop`; calls are made from the
sessions' tool tasks. The transport is a :class:`~agentd.mcp.transport.Transport`: a process
on stdio (:class:`~agentd.mcp.stdio.StdioTransport`, with the daemon's filtered environment
plus the server's own ``env``) or streamable HTTP (:class:`~agentd.mcp.http.HttpTransport`).
Tools and results are plain JSON objects (the MCP shapes).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentd.log import get_logger
from agentd.mcp.credentials import PreRegistered
from agentd.mcp.elicit import Elicitor
from agentd.mcp.http import HttpTransport
from agentd.mcp.servers import ServerDef
from agentd.mcp.stdio import StdioTransport
from agentd.mcp.transport import CallFailed, Json, LoginNeeded, Transport, login_hint

__all__ = ["CallFailed", "Connection", "LoginRequired", "Progress", "StartFailed"]

log = get_logger("agentd.mcp")

MAX_PAGES = 1000
"""Pages of ``tools/list`` read at most (a server whose cursors never end is cut there)."""

Progress = Callable[[float, float | None, str | None], None]
"""A call's progress: ``progress``, ``total`` (if known), ``message`` (if any)."""


class StartFailed(Exception):
    """The server could not be started or did not answer ``initialize``; the text says why."""


class LoginRequired(StartFailed):
    """The server wants the user to sign in (``agentctl mcp login NAME``, which the text
    names); not a failure of the server, so never counted towards its restart limit."""


class Connection:
    """A started (or failed) MCP server. ``tools`` is its last tool list (``tools/list``
    entries); ``on_change`` is called when it announces a new one
    (``notifications/tools/list_changed``: ``stale`` until fetched), ``on_exit`` when it stops
    or dies. It is its transport's :class:`~agentd.mcp.transport.Listener`."""

    def __init__(
        self,
        definition: ServerDef,
        cwd: Path,
        env: dict[str, str],
        on_change: Callable[[], None],
        on_exit: Callable[[], None],
    ) -> None:
        self.definition = definition
        self.cwd = cwd
        self.env = env
        self.tools: list[Json] = []
        self.error: str | None = None
        self.started_at = 0.0
        self.stopping = False
        """Set by :meth:`stop`: the ending is wanted, not a failure."""
        self.stale = False
        """The server announced a new tool list that was not fetched yet."""
        self.login_required = False
        """It ended because the server wants the user to sign in (:class:`LoginRequired`)."""
        self._on_change = on_change
        self._on_exit = on_exit
        self._transport: Transport | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._exited = False
        self._progress: dict[int, Progress] = {}
        self._elicitors: dict[int, tuple[object, Elicitor]] = {}
        self._tokens = 0

    @property
    def alive(self) -> bool:
        return self._transport is not None and not self._exited

    async def start(self) -> None:
        """Start the server and list its tools, within its ``startup_timeout``; StartFailed
        (the connection is then stopped) if that fails."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp-{self.definition.name}")
        try:
            async with asyncio.timeout(self.definition.startup_timeout):
                await asyncio.shield(ready)
        except TimeoutError:
            await self.stop()
            seconds = f"{self.definition.startup_timeout:g}"
            raise StartFailed(f"it did not answer initialize within {seconds} s") from None
        except StartFailed:
            await self.stop()
            raise
        self.started_at = time.monotonic()

    async def stop(self) -> None:
        """Stop the server (close its pipes, then terminate it) and wait for that."""
        self.stopping = True
        self._stop.set()
        if self._owner is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(self._owner, return_exceptions=True), 10)

    async def call(
        self,
        name: str,
        arguments: Json,
        timeout: float,
        on_progress: Progress | None = None,
        on_elicit: Elicitor | None = None,
        asker: object = None,
    ) -> Json:
        """``tools/call``: the result object. With ``on_progress`` the call carries a progress
        token and the server's ``notifications/progress`` for it go there; ``on_elicit``
        answers the server's ``elicitation/create`` while the call runs (routed by
        :meth:`elicit`; ``asker`` names whose user it asks, the session's question port). A
        cancel of the calling task sends ``notifications/cancelled`` and ends the call at
        once. CallFailed on an error answer, a timeout, a lost connection or an answer over
        the size limit."""
        transport = self._live()
        self._tokens += 1
        token = self._tokens
        if on_progress is not None:
            self._progress[token] = on_progress
        if on_elicit is not None:
            self._elicitors[token] = (asker, on_elicit)
        try:
            sent = token if on_progress is not None else None
            return await transport.call_tool(name, arguments, timeout, sent)
        except LoginNeeded:
            raise CallFailed(login_hint(self.definition.name)) from None
        finally:
            self._progress.pop(token, None)
            self._elicitors.pop(token, None)

    async def elicit(self, params: Any) -> Json:
        """A server's ``elicitation/create``, routed to the call it belongs to (see
        :func:`elicitation_target`); declined when that call cannot be told."""
        target = elicitation_target(self._elicitors, params)
        if target is None:
            if self._elicitors:
                log.warning(
                    "elicitation declined: calls of several sessions are running and the "
                    "request names none of them",
                    server=self.definition.name,
                )
            return {"action": "decline"}
        return await target(params)

    async def refresh_tools(self) -> None:
        """Fetch the tool list again (after ``list_changed``)."""
        self.stale = False
        self.tools = await self._all_tools()

    def _live(self) -> Transport:
        transport = self._transport
        if transport is None or self._exited:
            raise CallFailed("the server is not running")
        return transport

    async def _all_tools(self) -> list[Json]:
        """Every page of ``tools/list``, each asked for by the cursor of the one before."""
        tools: list[Json] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self._live().list_tools(cursor)
            tools += [t for t in page.get("tools", []) if isinstance(t, dict) and "name" in t]
            following = page.get("nextCursor")
            if not following or not isinstance(following, str) or following == cursor:
                break
            cursor = following
        return tools

    # --- the transport's listener -----------------------------------------------------------

    def notified(self, method: str) -> None:
        """A server notification: a new tool list is marked stale (fetched before the next
        turn, :meth:`refresh_tools`)."""
        if method == "notifications/tools/list_changed":
            self.stale = True
            self._on_change()

    def progressed(self, params: Any) -> None:
        """A ``notifications/progress``: to the call that holds its token (a late or unknown
        one is dropped)."""
        if not isinstance(params, dict):
            return
        listener = self._progress.get(params.get("progressToken"))  # type: ignore[arg-type]
        progress, total, message = (params.get(key) for key in ("progress", "total", "message"))
        if listener is None or not isinstance(progress, int | float):
            return
        listener(
            float(progress),
            float(total) if isinstance(total, int | float) else None,
            message if isinstance(message, str) else None,
        )

    def lost(self, reason: str) -> None:
        """The server went away (its process exited): unless it was stopped, an error."""
        if not self._stop.is_set():
            self.error = self.error or reason
            self._exited = True
            self._stop.set()

    # --- the owner task ---------------------------------------------------------------------

    def _make_transport(self) -> Transport:
        definition = self.definition
        if definition.url:
            client = pre_registered(definition)
            return HttpTransport(definition.url, dict(definition.headers), self, client=client)
        assert definition.command is not None
        cwd = Path(definition.cwd).expanduser() if definition.cwd else self.cwd
        argv = [definition.command, *definition.args]
        return StdioTransport(definition.name, argv, self.env, cwd, self)

    async def _own(self, ready: asyncio.Future[None]) -> None:
        transport: Transport | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                transport = self._make_transport()
                await transport.open(stack)
                self._transport = transport
                self.tools = await self._all_tools()
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            self.login_required = _login_needed(exc)
            if self.login_required and not ready.done():
                self.error = login_hint(self.definition.name)
                ready.set_exception(LoginRequired(self.error))
            said = (transport.failure(exc) if transport else None) or _describe(exc)
            if not ready.done():  # the start's own failure says more than a lost pipe
                self.error = said
                ready.set_exception(StartFailed(self.error))
            self.error = self.error or said
            if not isinstance(exc, Exception | asyncio.CancelledError):
                raise
        finally:
            self._transport = None
            self._exited = True
            self._on_exit()


def elicitation_target(
    elicitors: dict[int, tuple[object, Elicitor]], params: Any
) -> Elicitor | None:
    """Who answers an ``elicitation/create``: the call whose progress token the request's
    ``_meta.progressToken`` names; else, when every running call that can ask belongs to one
    session (one asker), the latest of them; else nobody (an MCP request does not say on the
    wire which call it serves, and a question must never reach another session's user)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    if isinstance(token, int) and token in elicitors:
        return elicitors[token][1]
    askers = {id(asker) for asker, _ in elicitors.values()}
    if len(askers) != 1:
        return None
    return elicitors[max(elicitors)][1]


def pre_registered(definition: ServerDef) -> PreRegistered | None:
    """The OAuth client the server's table names, if any."""
    return PreRegistered.of(
        definition.oauth_client_id,
        definition.oauth_client_secret_env,
        definition.oauth_callback_port,
    )


def _login_needed(exc: BaseException) -> bool:
    """Whether ``exc`` (or the first of a group, as anyio raises) is a LoginNeeded."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return isinstance(exc, LoginNeeded)


def _describe(exc: BaseException) -> str:
    """A one-line reason for a failed start or a lost connection."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, asyncio.CancelledError):
        return "it was stopped"
    if isinstance(exc, FileNotFoundError):
        return f"its command was not found ({exc.filename or exc})"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:500]
