"""One language server process and the LSP connection to it, on pygls's client side.

The process is started by agentd (not by pygls): behind ``setpriv --pdeathsig KILL`` (it
dies with the daemon, even a SIGKILLed one), with a tool-run marker in its environment (so a
daemon starting after a crash finds and kills it, :mod:`agentd.tools.process.orphans`), under
the session's sandbox wrapper when it has one, its stderr to the daemon log (rate-limited).
pygls's :class:`~pygls.lsp._base_client.BaseLanguageClient` sends requests and notifications
as lsprotocol types and answers the server's requests; the reading loop is agentd's own, so
that a hostile server costs one clear error:

- a frame over :data:`MAX_FRAME_BYTES` is skipped unread and fails the waiting requests (its
  id cannot be known) with the limit in the error;
- a frame that is not JSON, or an answer that does not fit its type, fails only the request
  it answers (when its id can be read), and is otherwise logged and dropped;
- a stream that is not LSP framing at all ends the connection (the server is then lost).

A cancelled request sends ``$/cancelRequest``. :meth:`ServerProcess.stop` sends
``shutdown`` and ``exit``, waits :data:`GRACE_SECONDS`, then SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp._base_client import BaseLanguageClient

from agentd import __version__
from agentd.log import get_logger
from agentd.tools.process.proctree import marked_env
from agentd.tools.process.spawn import death_signal_prefix, end_process

log = get_logger("agentd.langserver")
logging.getLogger("pygls").setLevel(logging.CRITICAL)  # every frame at INFO; errors: ours

MAX_FRAME_BYTES = 32 * 1024 * 1024
"""Largest message read from a server; a longer one fails the waiting requests."""
MAX_HEADER_BYTES = 8192
GRACE_SECONDS = 2.0
STDERR_LINES_PER_WINDOW = 20
STDERR_WINDOW_SECONDS = 10.0


class ServerLost(Exception):
    """The server cannot answer: it exited, never started, or broke the protocol."""


class RequestFailed(Exception):
    """One request failed (an error answer, a malformed or oversized answer, a timeout)."""


class _Client(BaseLanguageClient):
    """pygls's client, keeping the error of a message it failed to send (pygls reports it
    here instead of raising)."""

    send_error: Exception | None = None

    def report_server_error(self, error: Exception, source: Any) -> None:
        self.send_error = error


class ServerProcess:
    """A started language server. ``name`` labels log lines; ``on_exit`` is called once with
    the reason when the process or its stream ends."""

    def __init__(self, name: str, on_exit: Callable[[str], None]) -> None:
        self.name = name
        self.client = _Client("agentd", __version__)
        self.process: asyncio.subprocess.Process | None = None
        self._on_exit = on_exit
        self._tasks: list[asyncio.Task[None]] = []
        self._ids = itertools.count(1)
        self.exit_reason: str | None = None
        self._raw_ids: set[str] = set()
        self.last_message = time.monotonic()

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    async def start(
        self, argv: list[str], env: Mapping[str, str], cwd: Path, pass_fds: tuple[int, ...] = ()
    ) -> None:
        """Spawn ``argv`` (OSError when it cannot be) and start reading it."""
        prefix = await asyncio.to_thread(death_signal_prefix) or ()
        read_fd, write_fd = os.pipe()
        try:
            self.process = await asyncio.create_subprocess_exec(
                *prefix,
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=write_fd,
                env=marked_env(env),
                cwd=cwd,
                limit=MAX_HEADER_BYTES,
                pass_fds=pass_fds,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.client.protocol.set_writer(self.process.stdin)
        self._tasks = [
            asyncio.create_task(self._read(self.process.stdout)),
            asyncio.create_task(self._pump_stderr(read_fd)),
        ]

    async def request(
        self, method: str, params: Any, timeout: float | None, *, raw: bool = False
    ) -> Any:
        """``method``'s result (lsprotocol types; ``raw``: the JSON as it came). RequestFailed
        for an error answer or a timeout; ServerLost when the server is gone; cancelling sends
        ``$/cancelRequest``."""
        if self.exit_reason is not None:
            raise ServerLost(self.exit_reason)
        msg_id = f"agentd-{next(self._ids)}"  # pygls keeps the server's requests by id too
        try:
            future = self.client.protocol.send_request_async(method, params, msg_id=msg_id)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ServerLost(f"the server's input is closed ({exc})") from None
        if raw:
            self._raw_ids.add(msg_id)
        if self.client.send_error is not None:
            error, self.client.send_error = self.client.send_error, None
            self.client.protocol._request_futures.pop(msg_id, None)
            raise RequestFailed(f"{method} could not be sent: {error}")
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            self._cancel(msg_id)
            raise RequestFailed(f"{method} got no answer within {timeout:g} s") from None
        except asyncio.CancelledError:
            self._cancel(msg_id)
            raise
        except JsonRpcException as exc:
            raise RequestFailed(f"{method} failed: {exc.message}") from None
        except ServerLost:
            raise
        except RuntimeError as exc:  # pygls: the process exited with the request pending
            raise ServerLost(str(exc)) from None

    def notify(self, method: str, params: Any) -> None:
        if self.exit_reason is None:
            with contextlib.suppress(OSError, RuntimeError):
                self.client.protocol.notify(method, params)

    def _cancel(self, msg_id: str) -> None:
        self.client.protocol._request_futures.pop(msg_id, None)
        self.client.protocol._result_types.pop(msg_id, None)
        self.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    def _fail_pending(self, error: Exception) -> None:
        futures = self.client.protocol._request_futures
        for msg_id in list(futures):
            future = futures.pop(msg_id)
            if not future.done():
                future.set_exception(error)

    def _fail_one(self, msg_id: Any, reason: str) -> bool:
        future = self.client.protocol._request_futures.pop(msg_id, None)
        self.client.protocol._result_types.pop(msg_id, None)
        if future is None or future.done():
            return False
        future.set_exception(RequestFailed(reason))
        return True

    async def _read(self, stdout: asyncio.StreamReader) -> None:
        reason = "the server closed its output"
        try:
            while True:
                length = await _frame_length(stdout)
                if length is None:
                    break
                if length > MAX_FRAME_BYTES:
                    await _skip(stdout, length)
                    self._fail_pending(
                        RequestFailed(
                            f"the server sent a message of {length} bytes, over the "
                            f"{MAX_FRAME_BYTES // (1024 * 1024)} MiB limit"
                        )
                    )
                    continue
                self._handle(await stdout.readexactly(length))
        except (asyncio.IncompleteReadError, ConnectionError):
            reason = "the server's output ended in the middle of a message"
        except _NotLsp as exc:
            reason = f"the server broke the LSP framing: {exc}"
        if self.process is not None:  # its exit status, when it is exiting
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.process.wait()), 1.0)
        self._lost(reason)

    def _handle(self, body: bytes) -> None:
        self.last_message = time.monotonic()
        try:
            raw = msgspec.json.decode(body)
        except msgspec.DecodeError:
            log.warning("language server sent a frame that is not JSON", server=self.name)
            return
        if not isinstance(raw, dict):
            return
        protocol = self.client.protocol
        if raw.get("id") in self._raw_ids and "method" not in raw and "result" in raw:
            self._raw_ids.discard(raw["id"])
            future = protocol._request_futures.pop(raw["id"], None)
            protocol._result_types.pop(raw["id"], None)
            if future is not None and not future.done():
                future.set_result(raw["result"])
            return
        try:
            message = protocol.structure_message(raw)
        except Exception:
            if "method" not in raw and self._fail_one(raw.get("id"), "the answer was malformed"):
                return
            log.warning("language server sent a malformed message", server=self.name)
            return
        try:
            protocol.handle_message(message)
        except Exception as exc:
            log.warning("language server message dropped", server=self.name, error=str(exc))

    def _lost(self, reason: str) -> None:
        if self.exit_reason is not None:
            return
        code = self.process.returncode if self.process is not None else None
        self.exit_reason = reason if code is None else f"{reason} (exit status {code})"
        self._fail_pending(ServerLost(self.exit_reason))
        self._on_exit(self.exit_reason)

    async def _pump_stderr(self, fd: int) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 16)
        pipe = os.fdopen(fd, "rb", buffering=0)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        window, logged, dropped = time.monotonic(), 0, 0
        try:
            while True:
                try:
                    line = await reader.readline()
                except ValueError:  # a line past the limit: skip what was buffered
                    continue
                if not line:
                    break
                if time.monotonic() - window >= STDERR_WINDOW_SECONDS:
                    window, logged = time.monotonic(), 0
                if logged < STDERR_LINES_PER_WINDOW:
                    logged += 1
                    text = line.decode(errors="replace").rstrip()[:2000]
                    log.info("language server stderr", server=self.name, line=text)
                else:
                    dropped += 1
        finally:
            transport.close()
            if dropped:
                log.info("language server stderr dropped", server=self.name, lines=dropped)

    async def stop(self) -> None:
        """``shutdown`` and ``exit``, then SIGTERM and SIGKILL; the reading tasks end."""
        process = self.process
        if process is None:
            return
        if self.exit_reason is None and process.returncode is None:
            with contextlib.suppress(Exception):
                await self.request(types.SHUTDOWN, None, GRACE_SECONDS)
            self.notify(types.EXIT, None)
        self.exit_reason = self.exit_reason or "stopped"
        await end_process(process, GRACE_SECONDS)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class _NotLsp(Exception):
    """The stream is not LSP's header-and-body framing."""


async def _frame_length(stdout: asyncio.StreamReader) -> int | None:
    """The next frame's Content-Length (None at the end of the stream)."""
    length: int | None = None
    while True:
        try:
            line = await stdout.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            if not exc.partial.strip():
                return None
            raise _NotLsp("a header line without its end") from None
        except asyncio.LimitOverrunError:
            raise _NotLsp(f"a header line over {MAX_HEADER_BYTES} bytes") from None
        header = line.strip()
        if not header:
            if length is None:
                continue  # blank lines between frames are tolerated
            return length
        name, sep, value = header.partition(b":")
        if not sep:
            raise _NotLsp(f"{header[:60]!r} is not a header")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise _NotLsp(f"Content-Length {value.strip()[:20]!r}") from None


async def _skip(stdout: asyncio.StreamReader, length: int) -> None:
    left = length
    while left:
        chunk = await stdout.read(min(left, 1 << 20))
        if not chunk:
            raise asyncio.IncompleteReadError(b"", left)
        left -= len(chunk)
