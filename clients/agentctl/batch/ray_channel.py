"""The Ray engine's direct channel between the driver and its tasks (no Ray import here).

The driver listens on a TCP port of its own node (:class:`DriverChannel`); every attempt of a
task connects (:func:`node_session`) and speaks JSON lines:

1. node → driver ``{"hello": TOKEN, "key": KEY, "node": NODE}``; the driver checks the
   batch's token (constant-time) and the task key and answers ``{"env": {NAME: VALUE}}``: the
   values, from the driver's environment, of the names the task may have (``--env`` and the
   task's ``env``), or ``{"error": "…"}``;
2. node → driver ``{"event": TaskEvent}`` for each progress event (delivered to the
   scheduler's callback on its loop, as the local engine does);
3. driver → node ``{"stop": REASON}`` when the batch stops the task (Ctrl-C, the cap).

This keeps credential values out of Ray: a task's arguments hold the names, the channel's
address, the token and the key, never a value; Ray's logs, dashboard, state API, GCS and
object store never see one. The channel is plain TCP between the cluster's own nodes (as
Ray's traffic is): the token keeps other clients out, not an eavesdropper on that network.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec

from agentctl.batch.engine import ProgressCallback, StopRequest, TaskEvent

LINE_LIMIT = 1 << 20
"""The longest line either side accepts (a progress event is far shorter)."""


class ChannelError(Exception):
    """The driver refused the node or could not be reached."""


class _Registration:
    """One task run the driver waits for: its progress callback, names and stop request."""

    def __init__(self, progress: ProgressCallback, names: list[str], stop: StopRequest) -> None:
        self.progress = progress
        self.names = names
        self.stop = stop
        self.attempts: list[str] = []
        """The node of each attempt that connected (more than one: Ray retried it)."""


class DriverChannel:
    """The driver's end: a TCP server on ``host`` serving the registered task runs."""

    def __init__(self, host: str, environ: dict[str, str]) -> None:
        self.host = host
        self.port = 0
        self.token = secrets.token_urlsafe(32)
        self._environ = environ
        self._runs: dict[str, _Registration] = {}
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        """Listen on an ephemeral port of ``host``."""
        self._server = await asyncio.start_server(self._serve, self.host, 0, limit=LINE_LIMIT)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and drop every connection."""
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    def register(self, progress: ProgressCallback, names: list[str], stop: StopRequest) -> str:
        """A new key for one task run; :meth:`attempts` and :meth:`unregister` take it."""
        key = secrets.token_hex(8)
        self._runs[key] = _Registration(progress, names, stop)
        return key

    def attempts(self, key: str) -> list[str]:
        """The nodes the run's attempts connected from, in order."""
        registration = self._runs.get(key)
        return list(registration.attempts) if registration else []

    def unregister(self, key: str) -> None:
        """Forget the run: a late attempt of it is refused."""
        self._runs.pop(key, None)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            registration = await self._hello(reader, writer)
            if registration is not None:
                await self._events(reader, writer, registration)
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _hello(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> _Registration | None:
        hello = json.loads(await reader.readline() or b"{}")
        token = str(hello.get("hello", ""))
        registration = self._runs.get(str(hello.get("key", "")))
        if not hmac.compare_digest(token.encode(), self.token.encode()) or registration is None:
            await _send(writer, {"error": "refused: unknown batch or task"})
            return None
        registration.attempts.append(str(hello.get("node", "?")))
        env = {name: self._environ[name] for name in registration.names if name in self._environ}
        await _send(writer, {"env": env})
        registration.stop.on_set(lambda reason: _send_soon(writer, {"stop": reason}))
        return registration

    async def _events(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        registration: _Registration,
    ) -> None:
        while line := await reader.readline():
            message = json.loads(line)
            event = msgspec.convert(message.get("event"), TaskEvent)
            registration.progress(event)


async def _send(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    writer.write(json.dumps(message).encode() + b"\n")
    await writer.drain()


def _send_soon(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    if not writer.is_closing():
        writer.write(json.dumps(message).encode() + b"\n")


class NodeLink:
    """The node's end of one attempt's connection: the env it was given, progress out,
    stop requests in (``on_stop`` is called with the reason)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, env: dict[str, str]
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.env = env

    def send_event(self, event: TaskEvent) -> None:
        """Queue ``event`` for the driver (dropped once the connection is gone)."""
        if not self.writer.is_closing():
            data = msgspec.json.encode({"event": event})
            self.writer.write(data + b"\n")

    async def stops(self, on_stop: Callable[[str], None]) -> None:
        """Call ``on_stop(reason)`` for the driver's stop request; return at end of stream."""
        with contextlib.suppress(OSError, ValueError, asyncio.LimitOverrunError):
            while line := await self.reader.readline():
                reason = json.loads(line).get("stop")
                if reason:
                    on_stop(str(reason))


@contextlib.asynccontextmanager
async def node_session(
    host: str, port: int, token: str, key: str, node: str, timeout: float = 30.0
) -> AsyncIterator[NodeLink]:
    """Connect to the driver's channel as one attempt of task run ``key``; yield the link
    (its ``env`` holds the values the driver gave). :class:`ChannelError` when refused."""
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, limit=LINE_LIMIT), timeout
        )
    except (OSError, TimeoutError) as exc:
        raise ChannelError(f"cannot reach the batch driver at {host}:{port}: {exc}") from None
    try:
        await _send(writer, {"hello": token, "key": key, "node": node})
        answer = json.loads(await asyncio.wait_for(reader.readline(), timeout) or b"{}")
        if "env" not in answer:
            raise ChannelError(str(answer.get("error", "the batch driver closed the channel")))
        yield NodeLink(reader, writer, dict(answer["env"]))
    finally:
        with contextlib.suppress(OSError):
            await writer.drain()
        writer.close()
