"""The symmetric JSON-RPC 2.0 connection used by the daemon, by clients and by tests.

One :class:`Connection` wraps a byte stream (``StreamReader``/``StreamWriter``). Its read loop
(:meth:`Connection.serve`) cuts frames (:mod:`agentd.rpc.framing`), classifies them
(:mod:`agentd.rpc.envelope`) and dispatches:

* a request runs its handler as its own task, so slow calls never block fast ones; the task is
  answered with the result, the handler's :class:`~agentd.errors.RpcError`, -32800 when
  cancelled by ``$/cancelRequest``, or -32603 for anything else (traceback only in the log);
* a notification runs its handler (unknown ones are ignored); ``$/cancelRequest`` is built in;
* a response completes the matching :meth:`Connection.request`.

Everything written goes through the connection's :class:`~agentd.rpc.outbox.Outbox` (bounded,
one writer task, stalled peers dropped). When the peer ends its stream, requests already
received still run and are answered; then the connection closes. :meth:`Connection.close`
instead cancels them (each answered -32800), flushes and closes.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast, overload

import msgspec
from msgspec import UnsetType

from agentd.errors import (
    ConnectionLost,
    InternalError,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    RequestCancelled,
    RpcError,
)
from agentd.rpc import context, envelope
from agentd.rpc.envelope import Id
from agentd.rpc.framing import MAX_FRAME_BYTES, NDJSON, FrameDecoder, FrameError, encode_frame
from agentd.rpc.outbox import QUEUE_BYTES, QUEUE_FRAMES, STALL_TIMEOUT, Outbox
from agentd.rpc.pending import PendingCalls
from agentd.rpc.router import Route, Router

T = TypeVar("T")
CANCEL_METHOD = "$/cancelRequest"
PREAUTH_MAX_FRAME = 64 * 1024
"""Largest frame read from a connection that has not authenticated yet (TCP)."""
READ_CHUNK = 256 * 1024
FRAMES_PER_TURN = 32
"""Frames dispatched from one read before the event loop gets a turn (fairness between
connections)."""
log = logging.getLogger("agentd.rpc")
_ids = itertools.count(1)
_encoder = msgspec.json.Encoder()


class Connection:
    """One JSON-RPC peer. See the module docstring for the contract.

    ``framing`` None detects the framing from the peer's first bytes (servers); clients pass
    ``"ndjson"`` or ``"content-length"``. ``queue_limit``, ``queue_bytes`` and
    ``stall_timeout`` set the outbound back-pressure policy of :mod:`agentd.rpc.outbox`.
    ``cancel_method`` / ``cancel_key`` name the cancel notification and its id member, sent and
    understood: ``$/cancelRequest`` with ``id`` (agentd), or ``$/cancel_request`` with
    ``requestId`` (ACP). ``sends_cancels``: whether a withdrawn outgoing request is announced
    with that notification (False: it is forgotten silently, for peers that do not know the
    method); a peer that sends one itself has shown it knows it, and gets them from then on.
    ``oversize_fails_calls``: a frame over ``max_frame`` fails every call still waiting for an
    answer at once (:class:`~agentd.errors.InvalidRequest`: the dropped frame's id cannot be
    read, so whichever answer it was would otherwise be waited for until its timeout), for
    peers whose big frames are answers (an MCP server).
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        router: Router,
        *,
        name: str = "",
        transport: str = "",
        framing: str | None = None,
        queue_limit: int = QUEUE_FRAMES,
        queue_bytes: int = QUEUE_BYTES,
        stall_timeout: float = STALL_TIMEOUT,
        max_frame: int = MAX_FRAME_BYTES,
        cancel_method: str = CANCEL_METHOD,
        cancel_key: str = "id",
        sends_cancels: bool = True,
        oversize_fails_calls: bool = False,
    ) -> None:
        if framing not in (None, "ndjson", "content-length"):
            raise ValueError(f"unknown framing {framing!r}")
        self.id = next(_ids)
        self.name = name or f"conn-{self.id}"
        self.transport = transport
        self.router = router
        self.closed = False
        self._max_frame = max_frame
        self._authorized = True
        self.stall_timeout = stall_timeout
        self._cancel = (cancel_method, cancel_key)
        self.sends_cancels = sends_cancels
        self._oversize_fails_calls = oversize_fails_calls
        self._reader = reader
        self._frames = FrameDecoder(cast(Any, framing), max_frame)
        self._outbox = Outbox(
            writer,
            self._on_broken,
            max_frames=queue_limit,
            max_bytes=queue_bytes,
            stall_timeout=stall_timeout,
        )
        self._inflight: dict[Id, asyncio.Task[None]] = {}
        self._pending = PendingCalls()
        self.internal_errors = 0
        """Requests answered -32603 (a handler's bug), for ``daemon/metrics``."""
        self._close_callbacks: list[Callable[[Connection], object]] = []
        self._serve_task: asyncio.Task[None] | None = None
        self._shutdown_task: asyncio.Task[None] | None = None
        self._closer: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def authorized(self) -> bool:
        """False until a TCP client presented its token. Until then frames are limited to
        :data:`PREAUTH_MAX_FRAME` bytes and an oversized frame closes the connection."""
        return self._authorized

    @authorized.setter
    def authorized(self, value: bool) -> None:
        self._authorized = value
        limit = self._max_frame if value else min(self._max_frame, PREAUTH_MAX_FRAME)
        self._frames.max_frame = limit

    def __repr__(self) -> str:
        return f"<Connection {self.id} {self.name} {self.transport or '-'}>"

    @property
    def stopping(self) -> bool:
        """True once the connection began to close (peer EOF or hang-up, :meth:`close`): a
        handler cancelled from then on was cancelled by the close, not by ``$/cancelRequest``."""
        return self._stopping

    @property
    def bytes_out(self) -> int:
        """Bytes handed over for writing to the peer so far."""
        return self._outbox.bytes_out

    @property
    def queued(self) -> int:
        """Frames waiting in the outbound queue now."""
        return self._outbox.queued

    @property
    def framing(self) -> str:
        """The framing in use (``ndjson`` until a server has detected the peer's)."""
        return self._frames.framing or NDJSON

    # --- sending -------------------------------------------------------------------------

    def _send(self, message: Any) -> None:
        if self.closed:
            return
        body = _encoder.encode(message)
        self._outbox.put(encode_frame(body, self._frames.framing or NDJSON))

    def _send_error(self, request_id: Id, error: RpcError) -> None:
        """Send an error response; error ``data`` that cannot be encoded is dropped."""
        try:
            self._send(envelope.error_message(request_id, error))
        except (TypeError, ValueError, msgspec.EncodeError):
            log.exception("error data cannot be encoded", extra={"code": error.code})
            self._send(envelope.error_message(request_id, type(error)(error.message)))

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification. Never blocks; silently dropped once the connection is closed.

        ``params`` may be a Struct, builtins, ``msgspec.Raw`` (pre-encoded JSON) or None
        (the member is left out).
        """
        self._send(
            envelope.NotificationMessage(method=method, params=envelope.optional_params(params))
        )

    async def drained(self) -> None:
        """Until what was sent so far has mostly reached the peer (:meth:`Outbox.drained`):
        for a producer of many frames to pace itself."""
        await self._outbox.drained()

    @overload
    async def request(
        self, method: str, params: Any = None, *, result_type: type[T], timeout: float | None = None
    ) -> T: ...

    @overload
    async def request(
        self, method: str, params: Any = None, *, timeout: float | None = None
    ) -> Any: ...

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: Any = Any,
        timeout: float | None = None,
    ) -> Any:
        """Call ``method`` on the peer and return its result decoded as ``result_type``.

        Raises :class:`PeerTimeout` after ``timeout`` seconds (the peer is sent
        ``$/cancelRequest``, as it is when the calling task is cancelled),
        :class:`ConnectionLost` when the connection ends first, or the peer's error as an
        :class:`RpcError` subclass.
        """
        if self.closed or self._stopping:
            raise ConnectionLost(f"connection closed; cannot call {method}")
        wire_params = envelope.optional_params(params)

        def send(request_id: int) -> None:
            self._send(envelope.RequestMessage(id=request_id, method=method, params=wire_params))

        return await self._pending.call(
            method, send, self._send_cancel, result_type=result_type, timeout=timeout
        )

    def _send_cancel(self, request_id: int) -> None:
        if not self.sends_cancels:
            return
        method, key = self._cancel
        self.notify(method, {key: request_id})

    # --- reading -------------------------------------------------------------------------

    async def serve(self) -> None:
        """Read and dispatch until the peer ends the stream or :meth:`close` is called.

        On the way out: requests already received finish (unless closing cancels them),
        pending outgoing requests fail with :class:`ConnectionLost`, queued frames are
        flushed, the stream is closed and close callbacks run. Returns normally in all these
        cases; re-raises only when the serving task itself is cancelled from outside.
        """
        self._serve_task = asyncio.current_task()
        context.conn_id.set(self.id)
        external_cancel = False
        try:
            log.debug("connection opened", extra={"peer": self.name, "transport": self.transport})
            await self._read_loop()
        except asyncio.CancelledError:
            external_cancel = not self._stopping
            self._begin_stop()
        except (ConnectionError, OSError) as exc:
            log.debug("read failed", extra={"error": str(exc)})
            self._begin_stop()
        except Exception:
            log.exception("connection failed")
            self._begin_stop()
        finally:
            await self._shutdown()
        if external_cancel:
            raise asyncio.CancelledError

    async def _read_loop(self) -> None:
        """Read and dispatch frames in order; after every :data:`FRAMES_PER_TURN` frames of
        one read, the event loop gets a turn, so a client sending thousands of requests at
        once cannot keep the other connections waiting for all of them."""
        read = self._reader.read
        while not self._stopping:
            data = await read(READ_CHUNK)
            if not data:
                return
            for count, item in enumerate(self._frames.feed(data), 1):
                if self._stopping:
                    break
                if isinstance(item, FrameError):
                    self._on_frame_error(item)
                else:
                    self._dispatch(envelope.parse(item))
                if count % FRAMES_PER_TURN == 0:
                    await asyncio.sleep(0)
            if self._frames.dead:
                self._begin_stop()

    def _on_frame_error(self, error: FrameError) -> None:
        log.warning("bad frame", extra={"error": error.message, "fatal": error.fatal})
        rpc_error: RpcError = (
            InvalidRequest(error.message) if error.too_large else ParseError(error.message)
        )
        self._send_error(None, rpc_error)
        if error.too_large and self._oversize_fails_calls:
            self._pending.fail_all(InvalidRequest(f"an answer was dropped: {error.message}"))
        if not self._authorized:
            self._begin_stop()

    def _dispatch(self, message: envelope.Inbound) -> None:
        if isinstance(message, envelope.Request):
            self._on_request(message)
        elif isinstance(message, envelope.Notification):
            self._on_notification(message)
        elif isinstance(message, envelope.Response):
            self._on_response(message)
        else:
            log.debug("invalid message", extra={"error": message.error.message})
            self._send_error(message.id, message.error)

    def _on_request(self, request: envelope.Request) -> None:
        log.debug("request", extra={"id": request.id, "method": request.method})
        try:
            route = self.router.route(request.method)
            if route is None:
                raise MethodNotFound(f"unknown method: {request.method}")
            if request.id in self._inflight:
                raise InvalidRequest(f"request id {request.id!r} is already in use")
            self.router.check(self, request.method)
            params = route.decode(request.params)
        except RpcError as exc:
            self._send_error(request.id, exc)
            return
        if route.inline:
            self._call_inline(route, request.id, params)
        else:
            self._start(route, request.id, route.handler(self, params))

    def _call_inline(self, route: Route, request_id: Id, params: Any) -> None:
        """Run a plain-function handler now, so it completes before the next frame is read."""
        token = context.request_id.set(request_id)
        try:
            result = route.handler(self, params)
            if inspect.isawaitable(result):
                self._start(route, request_id, result)
            else:
                self._send(envelope.ResultMessage(id=request_id, result=result))
        except RpcError as exc:
            self._send_error(request_id, exc)
        except Exception:
            self._internal_error(route, request_id)
        finally:
            context.request_id.reset(token)

    def _start(self, route: Route, request_id: Id, pending: Awaitable[Any]) -> None:
        task = asyncio.get_running_loop().create_task(self._run(route, request_id, pending))
        self._inflight[request_id] = task
        task.add_done_callback(lambda done: self._forget(request_id, done, pending))

    def _forget(self, request_id: Id, task: asyncio.Task[None], pending: Awaitable[Any]) -> None:
        if self._inflight.get(request_id) is task:
            del self._inflight[request_id]
        if task.cancelled():  # cancelled before it ever ran (cancel right behind the request)
            if inspect.iscoroutine(pending):
                pending.close()
            self._send_error(request_id, RequestCancelled("request cancelled"))

    async def _run(self, route: Route, request_id: Id, pending: Awaitable[Any]) -> None:
        context.request_id.set(request_id)
        try:
            result = await pending
            self._send(envelope.ResultMessage(id=request_id, result=result))
        except asyncio.CancelledError:
            self._send_error(request_id, RequestCancelled("request cancelled"))
        except RpcError as exc:
            self._send_error(request_id, exc)
        except Exception:
            self._internal_error(route, request_id)

    def _internal_error(self, route: Route, request_id: Id) -> None:
        """Answer -32603 without details; the traceback goes to the log only."""
        log.exception("request failed", extra={"method": route.method})
        self.internal_errors += 1
        error = InternalError(
            f"internal error in {route.method} (request {request_id!r}; see the daemon log)"
        )
        self._send_error(request_id, error)

    def _on_notification(self, note: envelope.Notification) -> None:
        method, key = self._cancel
        if note.method != method:
            self.router.notify(self, note.method, note.params)
            return
        self.sends_cancels = True  # the peer speaks the method
        target = envelope.cancel_target(note.params, key)
        task = None if isinstance(target, UnsetType) else self._inflight.get(target)
        if task is not None:
            task.cancel()

    def _on_response(self, response: envelope.Response) -> None:
        self._pending.settle(response)

    # --- closing -------------------------------------------------------------------------

    def add_close_callback(self, fn: Callable[[Connection], object]) -> None:
        """Call ``fn(connection)`` once, when the connection has closed."""
        self._close_callbacks.append(fn)

    def start(self) -> asyncio.Task[None]:
        """Run :meth:`serve` in a new task and return it (for clients)."""
        task = asyncio.get_running_loop().create_task(self.serve(), name=f"rpc-{self.name}")
        self._serve_task = task
        return task

    async def close(self) -> None:
        """Stop reading, cancel in-flight handlers (answered -32800), flush, close the stream."""
        self._begin_stop()
        serve_task = self._serve_task
        if serve_task and not serve_task.done() and serve_task is not asyncio.current_task():
            serve_task.cancel()
        await self._shutdown()

    def close_soon(self) -> None:
        """Close once the current step is over: answers queued now are still flushed."""
        if self._closer is None:
            self._closer = asyncio.get_running_loop().create_task(self.close())

    def _begin_stop(self) -> None:
        self._stopping = True
        for task in list(self._inflight.values()):
            if task is not asyncio.current_task():
                task.cancel()

    def _on_broken(self, reason: str) -> None:
        fields = {"reason": reason, "peer": self.name, "conn_id": self.id, "request_id": None}
        log.warning("dropping connection", extra=fields)
        self._begin_stop()
        self.close_soon()

    async def _shutdown(self) -> None:
        if self._shutdown_task is None:
            loop = asyncio.get_running_loop()
            self._shutdown_task = loop.create_task(self._finish())
        await asyncio.shield(self._shutdown_task)

    async def _finish(self) -> None:
        self._stopping = True
        self._pending.fail_all(ConnectionLost("the connection closed"))
        if self._inflight:
            await asyncio.wait(list(self._inflight.values()))
        self.closed = True
        await self._outbox.close(self.stall_timeout)
        log.debug("connection closed", extra={"peer": self.name})
        for callback in self._close_callbacks:
            try:
                callback(self)
            except Exception:
                log.exception("close callback failed")
