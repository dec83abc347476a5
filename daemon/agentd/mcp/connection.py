"""One live MCP server: its process (or HTTP session), its tools, its calls.

Each :class:`Connection` has an *owner* task that opens the transport, runs ``initialize``
and ``tools/list``, and holds it open until :meth:`Connection.stop` (the SDK's HTTP client is
a stack of anyio context managers that the same task must enter and leave); calls are made
from the sessions' tool tasks. Tools and results are plain JSON objects (the MCP shapes).

A stdio server (:mod:`agentd.mcp.stdio`, agentd's own JSON-RPC: no SDK import) is started
through ``setpriv --pdeathsig KILL`` (it dies with the daemon, even a SIGKILLed one) with the
daemon's filtered environment plus its own ``env``; its stderr goes to the daemon log,
rate-limited, and the end of its stderr tells that it exited. A streamable HTTP server goes
through the official SDK's client.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentd import __version__
from agentd.errors import RpcError
from agentd.log import get_logger
from agentd.mcp.servers import ServerDef
from agentd.mcp.stdio import open_stdio
from agentd.tools.process.spawn import death_signal_prefix

log = get_logger("agentd.mcp")

STDERR_LINES_PER_WINDOW = 20
STDERR_WINDOW_SECONDS = 10.0
STDERR_LINE_CHARS = 2000
PROTOCOL_VERSION = "2025-06-18"
Json = dict[str, Any]
Request = Callable[[str, Json, float | None], Awaitable[Json]]
Progress = Callable[[float, float | None, str | None], None]
"""A call's progress: ``progress``, ``total`` (if known), ``message`` (if any)."""


class StartFailed(Exception):
    """The server could not be started or did not answer ``initialize``; the text says why."""


class CallFailed(Exception):
    """A request failed (an error answer, a timeout, a lost connection); the text says why."""


class Connection:
    """A started (or failed) MCP server. ``tools`` is its last tool list (``tools/list``
    entries); ``on_change`` is called when it announces a new one
    (``notifications/tools/list_changed``: ``stale`` until fetched), ``on_exit`` when it stops
    or dies."""

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
        self._on_change = on_change
        self._on_exit = on_exit
        self._request: Request | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._exited = False
        self._progress: dict[int, Progress] = {}
        self._tokens = 0

    @property
    def alive(self) -> bool:
        return self._request is not None and not self._exited

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
        self, name: str, arguments: Json, timeout: float, on_progress: Progress | None = None
    ) -> Json:
        """``tools/call``: the result object. With ``on_progress`` the call carries a progress
        token and the server's ``notifications/progress`` for it go there. A cancel of the
        calling task sends ``notifications/cancelled`` and ends the call at once. CallFailed
        on an error answer, a timeout or a lost connection."""
        params: Json = {"name": name, "arguments": arguments}
        if on_progress is None:
            return await self._send("tools/call", params, timeout)
        self._tokens += 1
        token = self._tokens
        params["_meta"] = {"progressToken": token}
        self._progress[token] = on_progress
        try:
            return await self._send("tools/call", params, timeout)
        finally:
            del self._progress[token]

    async def refresh_tools(self) -> None:
        """Fetch the tool list again (after ``list_changed``)."""
        self.stale = False
        self.tools = await self._all_tools()

    async def _send(self, method: str, params: Json, timeout: float | None) -> Json:
        request = self._request
        if request is None or self._exited:
            raise CallFailed("the server is not running")
        return await request(method, params, timeout)

    async def _all_tools(self) -> list[Json]:
        """Every page of ``tools/list``."""
        tools: list[Json] = []
        cursor: str | None = None
        while True:
            page = await self._send("tools/list", {"cursor": cursor} if cursor else {}, 60)
            tools += [t for t in page.get("tools", []) if isinstance(t, dict) and "name" in t]
            cursor = page.get("nextCursor")
            if not cursor:
                return tools

    def _notified(self, method: str) -> None:
        """A server notification: a new tool list is marked stale (fetched before the next
        turn, :meth:`refresh_tools`)."""
        if method == "notifications/tools/list_changed":
            self.stale = True
            self._on_change()

    def _progressed(self, params: Any) -> None:
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

    # --- the owner task ---------------------------------------------------------------------

    async def _own(self, ready: asyncio.Future[None]) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.definition.url:
                    self._request = await self._open_http(stack)
                else:
                    self._request = await self._open_stdio(stack)
                self.tools = await self._all_tools()
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            self.error = self.error or _describe(exc)
            if not ready.done():
                ready.set_exception(StartFailed(self.error))
            if not isinstance(exc, Exception | asyncio.CancelledError):
                raise
        finally:
            self._request = None
            self._exited = True
            self._on_exit()

    async def _open_stdio(self, stack: contextlib.AsyncExitStack) -> Request:
        definition = self.definition
        assert definition.command is not None
        prefix = await asyncio.to_thread(death_signal_prefix) or ()
        argv = [*prefix, definition.command, *definition.args]
        cwd = Path(definition.cwd).expanduser() if definition.cwd else self.cwd
        read_fd, write_fd = os.pipe()
        try:
            opened = open_stdio(argv, self.env, cwd, write_fd, self._notified, self._progressed)
            conn = await stack.enter_async_context(opened)
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)  # the child holds its copy: the pipe ends when the server exits
        pump = asyncio.create_task(self._pump_stderr(read_fd))
        stack.push_async_callback(_cancel, pump)

        async def request(method: str, params: Json, timeout: float | None) -> Json:
            try:
                result = await conn.request(method, params, timeout=timeout)
            except RpcError as exc:
                raise CallFailed(exc.message) from None
            return result if isinstance(result, dict) else {}

        init = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "agentd", "version": __version__},
        }
        await request("initialize", init, None)
        conn.notify("notifications/initialized", {})
        return request

    async def _open_http(self, stack: contextlib.AsyncExitStack) -> Request:
        """The official SDK's streamable HTTP client (imported only here)."""
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        from mcp.shared.exceptions import MCPError

        from mcp import ClientSession

        definition = self.definition
        assert definition.url is not None
        client = create_mcp_http_client(headers=dict(definition.headers))
        await stack.enter_async_context(client)
        opened = streamable_http_client(definition.url, http_client=client)
        read, write = await stack.enter_async_context(opened)
        session = ClientSession(read, write, message_handler=self._on_sdk_message)
        session = await stack.enter_async_context(session)
        await session.initialize()

        def progressed(params: Json) -> Any:
            token = params.get("_meta", {}).get("progressToken")
            if token is None:
                return None

            async def callback(progress: float, total: float | None, message: str | None) -> None:
                update = {"progress": progress, "total": total, "message": message}
                self._progressed({"progressToken": token, **update})

            return callback

        async def request(method: str, params: Json, timeout: float | None) -> Json:
            try:
                if method == "tools/call":
                    args = params["name"], params["arguments"]
                    result: Any = await session.call_tool(
                        *args, read_timeout_seconds=timeout, progress_callback=progressed(params)
                    )
                else:
                    result = await session.list_tools()
            except (MCPError, OSError) as exc:
                raise CallFailed(str(exc) or type(exc).__name__) from None
            dumped: Json = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            return dumped

        return request

    async def _on_sdk_message(self, message: Any) -> None:
        self._notified(str(getattr(message, "method", "")))

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
