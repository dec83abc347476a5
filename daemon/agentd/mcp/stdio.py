"""The stdio transport to an MCP server, without the SDK: the server's stdin/stdout carry
newline-delimited JSON-RPC, which agentd's own :mod:`agentd.rpc` speaks (requests,
notifications, ``notifications/cancelled`` for a request whose caller was cancelled, the
server's ``ping``). The SDK costs a noticeable slice of a second to import (seconds on a
loaded machine: ``bench_mcp``), more than the whole budget of a session's first server, so
stdio servers never import it; streamable HTTP servers use it (:mod:`agentd.mcp.http`).

The server is started by :func:`spawn_server`: through ``setpriv --pdeathsig KILL`` (it dies
with the daemon, even a SIGKILLed one), with the environment it is given, its stderr to the
daemon log (rate-limited; the end of its stderr tells that it exited).

Size: a message from the server is at most :data:`MAX_MESSAGE_BYTES` (well below the
JSON-RPC frame limit). A longer line fails every call waiting for an answer at once, with the
limit in the error (its id cannot be read; the server stays usable). Answers are decoded on
the event loop: msgspec holds the interpreter lock while it decodes, so a worker thread would
not let the loop run meanwhile (measured: it made the stall longer, ``bench_mcp_big``); the
limit is what bounds the stall.

On exit stdin is closed, the server gets :data:`GRACE_SECONDS` to leave, then SIGTERM, then
SIGKILL. The server starts with a tool-run marker in its environment
(:func:`agentd.tools.process.proctree.marked_env`), so the processes it starts are ended with
the daemon and cannot drive it (:mod:`agentd.tools.process.peers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentd.errors import RpcError
from agentd.log import get_logger
from agentd.mcp.transport import CallFailed, Json, Listener, initialize_params
from agentd.rpc import Connection, Router
from agentd.rpc.connect import open_connection
from agentd.tools.process.proctree import marked_env
from agentd.tools.process.spawn import death_signal_prefix, end_process

log = get_logger("agentd.mcp")

GRACE_SECONDS = 2.0
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""Largest message read from a stdio server (a quarter of the JSON-RPC frame limit; what a
session keeps of a tool result is far less)."""
READ_BUFFER = 1024 * 1024
"""Bytes of the server's stdout buffered before reading from it pauses."""
STDERR_LINES_PER_WINDOW = 20
STDERR_WINDOW_SECONDS = 10.0
STDERR_LINE_CHARS = 2000


async def spawn_server(
    argv: list[str], env: Mapping[str, str], cwd: Path, stderr: int
) -> asyncio.subprocess.Process:
    """Start a stdio server: ``argv`` behind the death-signal prefix, in ``cwd``, with exactly
    ``env``, stdin and stdout piped, stderr to the descriptor ``stderr``. OSError when it
    cannot be spawned."""
    prefix = await asyncio.to_thread(death_signal_prefix) or ()
    return await asyncio.create_subprocess_exec(
        *prefix,
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=marked_env(env),  # its children are found and ended with the daemon's
        cwd=cwd,
        limit=READ_BUFFER,
    )


class StdioTransport:
    """A server process speaking MCP on its stdin/stdout (:class:`~agentd.mcp.transport.
    Transport`). ``name`` labels its log lines."""

    def __init__(
        self, name: str, argv: list[str], env: Mapping[str, str], cwd: Path, listener: Listener
    ) -> None:
        self.name = name
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.listener = listener
        self._conn: Connection | None = None
        self._last_stderr = ""

    async def open(self, stack: contextlib.AsyncExitStack) -> None:
        read_fd, write_fd = os.pipe()
        try:
            process = await spawn_server(self.argv, self.env, self.cwd, write_fd)
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)  # the child holds its copy: the pipe ends when the server exits
        assert process.stdout is not None
        assert process.stdin is not None
        conn = self._conn = open_connection(
            process.stdout,
            process.stdin,
            self._router(),
            name=f"mcp-{Path(self.argv[-1]).name}",
            transport="stdio",
            cancel_method="notifications/cancelled",
            cancel_key="requestId",
            max_frame=MAX_MESSAGE_BYTES,
            oversize_fails_calls=True,
        )
        stack.push_async_callback(lambda: asyncio.shield(_stop(process, conn)))
        pump = asyncio.create_task(self._pump_stderr(read_fd))
        stack.push_async_callback(_cancel, pump)
        try:
            await self._request("initialize", initialize_params(), None)
        except CallFailed as exc:
            raise CallFailed(await self._exit_reason(process, pump) or str(exc)) from None
        conn.notify("notifications/initialized", {})

    async def _exit_reason(
        self, process: asyncio.subprocess.Process, pump: asyncio.Task[None]
    ) -> str | None:
        """Why a server that ended before answering ``initialize`` did: its exit code and
        the last line of its stderr (None when it has not exited)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), GRACE_SECONDS)
        await asyncio.wait({pump}, timeout=GRACE_SECONDS)
        if process.returncode is None:
            return None
        said = f": {self._last_stderr}" if self._last_stderr else ""
        return f"the server exited with code {process.returncode} before initialize{said}"

    def failure(self, exc: BaseException) -> str | None:
        return None  # its errors say why themselves

    async def list_tools(self, cursor: str | None) -> Json:
        return await self._request("tools/list", {"cursor": cursor} if cursor else {}, 60)

    async def call_tool(
        self, name: str, arguments: Json, timeout: float, progress_token: int | None
    ) -> Json:
        params: Json = {"name": name, "arguments": arguments}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        return await self._request("tools/call", params, timeout)

    async def _request(self, method: str, params: Json, timeout: float | None) -> Json:
        """``method``'s result object (CallFailed for an error answer, a timeout, a lost
        server, an answer over the limit)."""
        if self._conn is None:
            raise CallFailed("the server is not running")
        try:
            result = await self._conn.request(method, params, timeout=timeout)
        except RpcError as exc:
            raise CallFailed(exc.message) from None
        return result if isinstance(result, dict) else {}

    def _router(self) -> Router:
        router = Router()
        router.add("ping", _pong, Any)
        router.add("elicitation/create", self._on_elicit, Any)
        for method in ("notifications/tools/list_changed", "notifications/message"):
            router.on_notification(method, self._notified(method), Any)
        router.on_notification(
            "notifications/progress", lambda _conn, params: self.listener.progressed(params), Any
        )
        return router

    async def _on_elicit(self, conn: Connection, params: Any) -> Json:
        return await self.listener.elicit(params)

    def _notified(self, method: str) -> Any:
        def handler(conn: Connection, params: Any) -> None:
            self.listener.notified(method)

        return handler

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
        limiter = _RateLimit(self.name)
        try:
            while True:
                try:
                    line = await reader.readline()
                except ValueError:  # a line past the limit: skip what was buffered
                    continue
                if not line:
                    break
                text = line.decode(errors="replace").rstrip()[:STDERR_LINE_CHARS]
                self._last_stderr = text.strip()[:500] or self._last_stderr
                limiter.log(text)
        finally:
            limiter.flush()
            transport.close()
        self.listener.lost("the server exited")


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


def _pong(conn: Connection, params: Any) -> dict[str, Any]:
    return {}


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def _stop(process: asyncio.subprocess.Process, conn: Connection) -> None:
    """Close the connection and stdin, wait a little, then SIGTERM and SIGKILL."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(conn.close(), GRACE_SECONDS)
    await end_process(process, GRACE_SECONDS)
