"""One live MCP server: its process (or HTTP session), its tools, its calls.

The SDK's client is a stack of anyio context managers that must be entered and left by the
same task, so each :class:`Connection` has an *owner* task holding them open until
:meth:`Connection.stop`; calls are made from the sessions' tool tasks. A stdio server
(:mod:`agentd.mcp.stdio`: spawned before the SDK is imported) is started through
``setpriv --pdeathsig KILL`` (it dies with the daemon, even a SIGKILLed
one) with the daemon's filtered environment plus its own ``env``; its stderr goes to the
daemon log, rate-limited, and the end of its stderr tells that it exited.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentd.log import get_logger
from agentd.mcp.servers import ServerDef

if TYPE_CHECKING:
    import mcp.types as mcp_types

    from mcp import ClientSession

log = get_logger("agentd.mcp")

STDERR_LINES_PER_WINDOW = 20
STDERR_WINDOW_SECONDS = 10.0
STDERR_LINE_CHARS = 2000


class StartFailed(Exception):
    """The server could not be started or did not answer ``initialize``; the text says why."""


class Connection:
    """A started (or failed) MCP server. ``tools`` is its last tool list; ``on_change`` is
    called when it announces a new one (``notifications/tools/list_changed``), ``on_exit``
    when it stops or dies."""

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
        self.tools: list[mcp_types.Tool] = []
        self.error: str | None = None
        self.started_at = 0.0
        self._on_change = on_change
        self._on_exit = on_exit
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._exited = False
        self.stopping = False
        self.stale = False
        """The server announced a new tool list that was not fetched yet."""
        """Set by :meth:`stop`: the ending is wanted, not a failure."""

    @property
    def alive(self) -> bool:
        return self._session is not None and not self._exited

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
        self, name: str, arguments: dict[str, Any], timeout: float
    ) -> mcp_types.CallToolResult:
        """Call tool ``name``. A cancel of the calling task sends ``notifications/cancelled``
        (the SDK does it) and ends the call at once. Raises the SDK's MCPError on an error
        answer, a timeout or a closed connection."""
        session = self._session
        if session is None:
            raise ConnectionError("the server is not running")
        return await session.call_tool(name, arguments, read_timeout_seconds=timeout)

    async def refresh_tools(self) -> None:
        """Fetch the tool list again (after ``list_changed``)."""
        session = self._session
        if session is not None:
            self.stale = False
            self.tools = await _all_tools(session)

    # --- the owner task ---------------------------------------------------------------------

    async def _own(self, ready: asyncio.Future[None]) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open_transport(stack)  # imports the SDK meanwhile
                from mcp import ClientSession

                session = ClientSession(read, write, message_handler=self._on_message)
                session = await stack.enter_async_context(session)
                await session.initialize()
                self.tools = await _all_tools(session)
                self._session = session
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            self.error = self.error or _describe(exc)
            if not ready.done():
                ready.set_exception(StartFailed(self.error))
            if not isinstance(exc, Exception | asyncio.CancelledError):
                raise
        finally:
            self._session = None
            self._exited = True
            self._on_exit()

    async def _open_transport(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        definition = self.definition
        if definition.url:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = create_mcp_http_client(headers=dict(definition.headers))
            await stack.enter_async_context(client)
            opened = streamable_http_client(definition.url, http_client=client)
            read, write = await stack.enter_async_context(opened)
            return read, write
        return await self._open_stdio(stack)

    async def _open_stdio(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        from agentd.mcp.stdio import open_stdio
        from agentd.tools.process.spawn import death_signal_prefix

        definition = self.definition
        assert definition.command is not None
        prefix = await asyncio.to_thread(death_signal_prefix) or ()
        argv = [*prefix, definition.command, *definition.args]
        cwd = Path(definition.cwd).expanduser() if definition.cwd else self.cwd
        read_fd, write_fd = os.pipe()
        try:
            opened = open_stdio(argv, self.env, cwd, write_fd)
            read, write = await stack.enter_async_context(opened)
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)  # the child holds its copy: the pipe ends when the server exits
        pump = asyncio.create_task(self._pump_stderr(read_fd))
        stack.push_async_callback(_cancel, pump)
        return read, write

    async def _pump_stderr(self, fd: int) -> None:
        """Log the server's stderr (at most :data:`STDERR_LINES_PER_WINDOW` lines per
        :data:`STDERR_WINDOW_SECONDS`, then a count of the dropped ones); its end means the
        server exited."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20)
        pipe = os.fdopen(fd, "rb", buffering=0)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        limiter = _RateLimit(self.definition.name)
        try:
            while True:
                try:
                    line = await reader.readline()
                except ValueError:  # a line past the limit: skip what was buffered
                    continue
                if not line:
                    break
                limiter.log(line.decode(errors="replace").rstrip()[:STDERR_LINE_CHARS])
        finally:
            limiter.flush()
            transport.close()
        if not self._stop.is_set():
            self.error = self.error or "the server exited"
            self._exited = True
            self._stop.set()

    async def _on_message(self, message: Any) -> None:
        """A new tool list is announced: marked stale (fetched at the next turn start, not
        here: this runs in the SDK's receive loop, which a request would block)."""
        import mcp.types as mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.stale = True
            self._on_change()


class _RateLimit:
    """Stderr lines of one server to the log, at most so many per window."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.window_start = time.monotonic()
        self.logged = 0
        self.dropped = 0

    def log(self, line: str) -> None:
        now = time.monotonic()
        if now - self.window_start >= STDERR_WINDOW_SECONDS:
            self.flush()
            self.window_start, self.logged = now, 0
        if self.logged < STDERR_LINES_PER_WINDOW:
            self.logged += 1
            log.info("mcp server stderr", server=self.server, line=line)
        else:
            self.dropped += 1

    def flush(self) -> None:
        if self.dropped:
            log.info("mcp server stderr dropped", server=self.server, lines=self.dropped)
            self.dropped = 0


async def _all_tools(session: ClientSession) -> list[mcp_types.Tool]:
    """Every page of ``tools/list``."""
    import mcp.types as mcp_types

    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    while True:
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


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
