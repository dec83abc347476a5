"""The mock LLM as an in-process HTTP client: what ``--provider mock`` uses in the daemon.

The provider code is the real one (request building, HTTP status handling, SSE parsing);
only the socket is gone: :class:`MockTransport` (a
:class:`~agentd.providers.http_types.ProviderHttp`) hands each request to the same handler
``agentd mock-llm`` serves over HTTP (:meth:`MockLLMServer.handle`) and streams its reply
back as the response body. No port, no server to start or stop, no httpx. The daemon sends
the mock provider's requests (base URL ``agentd.config.load.MOCK_BASE_URL``, a host that never
resolves) through it, so nothing leaves the process. A handler that fails mid-reply is a
``ConnectionBroken`` for the reader, as a server that drops the connection would be.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from agentd.mockllm.http import Request, Responder
from agentd.mockllm.scenarios import ScenarioError, Scenarios, load_scenarios
from agentd.mockllm.server import MockLLMServer
from agentd.providers.http_failures import ConnectionBroken
from agentd.providers.http_types import ProviderResponse, Timeouts

__all__ = ["MockTransport", "ScenarioError", "mock_scenarios"]

_END = None
_Item = tuple[int, dict[str, str]] | bytes | BaseException | None


def mock_scenarios(path: str | None = None) -> Scenarios:
    """The scenarios of ``--provider mock`` now: those of the file ``path`` (the session
    client's ``AGENTD_MOCK_SCENARIOS``; ``""``: the built-in ones), or with ``path`` None
    those of the file the daemon's own ``AGENTD_MOCK_SCENARIOS`` names (else the built-in
    ones). A file is read again when it changed (its size, modification time or inode:
    checked at every call, that is at every model request); a bad file raises
    ScenarioError."""
    chosen = os.environ.get("AGENTD_MOCK_SCENARIOS") if path is None else path
    if not chosen:
        return _built_in()
    try:
        info = Path(chosen).stat()
    except OSError:
        return load_scenarios(Path(chosen))  # the error names the file
    stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
    known = _read.get(chosen)
    if known is None or known[0] != stamp:
        known = _read[chosen] = (stamp, load_scenarios(Path(chosen)))
    return known[1]


_read: dict[str, tuple[tuple[int, int, int], Scenarios]] = {}
"""Each scenarios file as last read, with the stamp it had then."""


@cache
def _built_in() -> Scenarios:
    return load_scenarios(None)


class MockTransport:
    """Answers every request with a :class:`MockLLMServer` that never listens: with the
    scenarios of ``scenarios_path`` (see :func:`mock_scenarios`) as they are at that
    request, or always those of the ``server`` given."""

    def __init__(
        self, scenarios_path: str | None = None, *, server: MockLLMServer | None = None
    ) -> None:
        self._path = scenarios_path
        self._fixed = server is not None
        self._server = server

    @property
    def server(self) -> MockLLMServer:
        """The server answering the next request (its scenarios current)."""
        scenarios = None if self._fixed else mock_scenarios(self._path)
        if self._server is None:
            self._server = MockLLMServer(scenarios, keep_requests=0)  # nobody reads them
        elif scenarios is not None and self._server.scenarios is not scenarios:
            self._server.scenarios = scenarios  # the file changed: its new text from now on
        return self._server

    async def open(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        timeouts: Timeouts | None = None,
    ) -> ProviderResponse:
        """Answer one request; its response once the head is ready (the body streams)."""
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        fields = {name.lower(): value for name, value in (headers or {}).items()}
        parsed = Request(method, target, fields, body, True)
        queue: asyncio.Queue[_Item] = asyncio.Queue(maxsize=64)
        task = asyncio.ensure_future(self._answer(parsed, queue))
        try:
            head = await queue.get()
        except asyncio.CancelledError:
            task.cancel()
            raise
        if isinstance(head, BaseException):
            raise ConnectionBroken(f"mock LLM: {head}") from head
        assert isinstance(head, tuple)
        status, response_headers = head
        return _Response(status, response_headers, queue, task)

    async def aclose(self) -> None:
        """Nothing to close (no connection)."""

    async def _answer(self, request: Request, queue: asyncio.Queue[_Item]) -> None:
        respond = _QueueResponder(queue)
        try:
            server = self.server
        except ScenarioError as exc:  # a bad scenarios file: a client error, not retried
            error = {"error": {"message": f"mock LLM: {exc}", "type": "invalid_request_error"}}
            await respond.send(400, msgspec.json.encode(error))
            await queue.put(_END)
            return
        try:
            await server.handle(request, respond)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # reported to the reader as a broken response
            await queue.put(exc)
        else:
            await queue.put(_END)


class _QueueResponder(Responder):
    """A :class:`Responder` that queues the head and the body chunks instead of writing."""

    def __init__(self, queue: asyncio.Queue[_Item]) -> None:
        self._queue = queue

    async def send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        fields = {"content-type": content_type, "content-length": str(len(body)), **(headers or {})}
        await self._queue.put((status, fields))
        await self._queue.put(body)

    async def start_stream(
        self, status: int = 200, content_type: str = "text/event-stream"
    ) -> None:
        fields = {"content-type": content_type, "cache-control": "no-cache"}
        await self._queue.put((status, fields))

    async def write(self, data: bytes) -> None:
        if data:
            await self._queue.put(data)

    async def end(self) -> None:
        """The end is queued by the transport once the handler returns."""


class _Response:
    """A reply as a :class:`~agentd.providers.http_types.ProviderResponse`."""

    def __init__(
        self,
        status: int,
        headers: dict[str, str],
        queue: asyncio.Queue[_Item],
        task: asyncio.Future[None],
    ) -> None:
        self.status_code = status
        self.headers: Mapping[str, str] = headers
        self._queue = queue
        self._task = task

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        while True:
            item = await self._queue.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise ConnectionBroken(f"mock LLM: {item}") from item
            assert isinstance(item, bytes)
            if item:
                yield item

    async def aclose(self) -> None:
        """Stop the handler (a client that stopped reading mid-stream)."""
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task
