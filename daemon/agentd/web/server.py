"""The HTTP front-end of the daemon: a listener serving the page, the JSON API and events.

Routes (every one behind the checks of :mod:`agentd.web.security`):

=======================  ======================================================================
``GET /?token=T``        sign in: a one-time token for the cookie and the page key
                         (:mod:`agentd.web.signin`)
``GET /``, ``/ui/…``     the chat page and its files (:mod:`agentd.web.static`)
``POST /api/ticket``     a one-time ticket for one event stream
``POST /api/signout``    end every sign-in and close their event streams
``GET /api/hello``       ``WebHello``: version, default directory of new sessions
``POST /api/<method>``   the JSON API (:mod:`agentd.web.api`)
``GET /api/events``      ``?sessionId=S&ticket=T[&sinceSeq=N]``: the session's events as SSE
                         (:mod:`agentd.web.sse`); ``Last-Event-ID`` overrides ``sinceSeq``. The
                         first message after the replayed ones is ``event: subscribed`` with the
                         ``session/subscribe`` result
``POST /chat``, ``/clear``  the original single-conversation web mode (:mod:`agentd.web.compat`)
``GET /metrics``         ``daemon/metrics`` as Prometheus text (:mod:`agentd.web.metrics`)
=======================  ======================================================================

The listener runs on the daemon's event loop beside its other transports. Each request's head is
checked (:mod:`agentd.web.security`) before its body is read; connections are pooled by
:mod:`agentd.web.conns`; a non-loopback bind follows :mod:`agentd.web.remote`.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import msgspec

from agentd import __version__
from agentd.errors import InvalidParams, RpcError
from agentd.hosts import is_loopback
from agentd.log import get_logger
from agentd.protocol.methods import SubscribeParams
from agentd.protocol.metrics import DaemonMetricsResult
from agentd.protocol.web import WebHello
from agentd.web import api, signin
from agentd.web.compat import CompatChat, CompatStream
from agentd.web.conns import HEAD_TIMEOUT, IDLE_TIMEOUT, MAX_PREAUTH, Conn, Pool
from agentd.web.http import (
    COMMON,
    JSON,
    MAX_BODY,
    MAX_HEAD,
    MAX_PREAUTH_BODY,
    HttpError,
    Request,
    error_response,
    read_body,
    read_head,
    response,
    response_head,
)
from agentd.web.logins import SignIn
from agentd.web.metrics import CONTENT_TYPE, prometheus_text
from agentd.web.remote import (
    RemoteRefused,
    TlsFiles,
    check_bind,
    reachable_host,
    server_context,
    warnings,
)
from agentd.web.security import METRICS_PATH, Gate, Refused, is_sign_in
from agentd.web.sse import HEADERS as SSE_HEADERS
from agentd.web.sse import SseStream, since_seq
from agentd.web.static import CSP, load_assets

if TYPE_CHECKING:
    from agentd.session.service import SessionService

log = get_logger("agentd.web")

DEFAULT_PORT = 8765
UPKEEP_INTERVAL = 60.0
"""Seconds between sweeps of expired sign-ins (their event streams are closed)."""
_encode = msgspec.json.Encoder().encode


class WebListenError(Exception):
    """The HTTP front-end cannot start (the message says why)."""


class WebServer:
    """Serves HTTP for one daemon on ``host:port`` (port 0: any free port); ``tls``: serve
    HTTPS; a non-loopback ``host`` needs ``allow_remote`` and ``tls`` or ``insecure_http``."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        allow_remote: bool = False,
        tls: TlsFiles | None = None,
        insecure_http: bool = False,
        peer_check: Callable[[asyncio.StreamWriter], Awaitable[bool]] | None = None,
        metrics: Callable[[], DaemonMetricsResult] | None = None,
    ) -> None:
        """``metrics``: the daemon's numbers for ``GET /metrics`` (None: 404)."""
        self.host = host
        self.metrics = metrics
        self.port = port
        self.allow_remote = allow_remote
        self.peer_check = peer_check
        """Asked first for every connection: True when it closed it (its peer refused)."""
        self.tls = tls
        self.insecure_http = insecure_http
        self.gate: Gate | None = None
        self._server: asyncio.AbstractServer | None = None
        self._service: SessionService | None = None
        self._compat: CompatChat | None = None
        self._streams: dict[SseStream | CompatStream, SignIn] = {}
        self._pool = Pool()
        self._upkeep: asyncio.Task[None] | None = None
        self._assets = load_assets()

    @property
    def service(self) -> SessionService:
        if self._service is None:
            raise RuntimeError("WebServer used before start()")
        return self._service

    async def start(self, service: SessionService) -> None:
        """Bind; WebListenError for a bind :mod:`agentd.web.remote` refuses or a busy port."""
        loopback = is_loopback(self.host)
        try:
            check_bind(
                self.host,
                loopback=loopback,
                allow_remote=self.allow_remote,
                tls=self.tls is not None,
                insecure=self.insecure_http,
            )
            context = server_context(self.tls) if self.tls is not None else None
        except RemoteRefused as exc:
            raise WebListenError(str(exc)) from None
        self._service = service
        self._compat = CompatChat(service, str(Path.cwd()))
        try:
            self._server = await asyncio.start_server(
                self._connection,
                self.host,
                self.port,
                limit=MAX_HEAD,
                backlog=MAX_PREAUTH,
                ssl=context,
                ssl_handshake_timeout=HEAD_TIMEOUT if context is not None else None,
            )
        except OSError as exc:
            raise WebListenError(f"cannot serve HTTP on {self.host}:{self.port}: {exc}") from None
        self.port = self._server.sockets[0].getsockname()[1]
        public = reachable_host(self.host)
        self.gate = Gate(
            self.host, self.port, loopback, tls=context is not None, public_host=public
        )
        self._upkeep = asyncio.create_task(self._upkeep_loop())
        log.info("serving http", host=self.host, port=self.port, origin=self.gate.origin)

    def link(self, cwd: str | None = None) -> str:
        """A URL of the page with a new one-time token (new sessions start in ``cwd``)."""
        if self.gate is None:
            raise RuntimeError("WebServer used before start()")
        return self.gate.mint_link(urlencode({"cwd": cwd}) if cwd else "")

    def announce(self) -> None:
        """Print the page's link to stderr (the one place the token is shown), after a warning
        when other machines can reach it."""
        assert self.gate is not None
        if not self.gate.loopback:
            for line in warnings(self.gate.origin, tls=self.gate.tls):
                log.warning(line)
                print(f"agentd: {line}", file=sys.stderr, flush=True)
        print(f"agentd: web chat at {self.link()}", file=sys.stderr, flush=True)

    async def stop(self) -> None:
        """Stop accepting connections and end the event streams."""
        if self._server is not None:
            self._server.close()
        if self._upkeep is not None:
            self._upkeep.cancel()
        self._close_streams(lambda _: True)

    async def close(self) -> None:
        """Close every connection."""
        await self.stop()
        for writer in self._pool.writers():
            writer.close()
        self._server = None

    # --- connections -----------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.peer_check is not None and await self.peer_check(writer):
            return  # a tool process of the daemon (a leaked link must not sign it in)
        conn = self._pool.open(writer)
        if conn is None:
            writer.write(error_response(503, "too many connections", json=False, close=True))
            writer.close()
            return
        try:
            while await self._serve_one(conn, reader):
                pass
        except (ConnectionError, OSError):
            pass
        finally:
            self._pool.drop(conn)
            writer.close()

    async def _serve_one(self, conn: Conn, reader: asyncio.StreamReader) -> bool:
        """Read, check and answer one request; False when the connection must close."""
        writer = conn.writer
        loop = asyncio.get_running_loop()
        conn.waiting = True
        request: Request | None = None
        try:
            async with asyncio.timeout_at(loop.time() + conn.head_timeout) as deadline:
                request = await read_head(reader)
                if request is None:
                    return False
                sign_in = self._admit(conn, request)
                if conn.signed_in:
                    deadline.reschedule(loop.time() + IDLE_TIMEOUT)
                await read_body(reader, request, MAX_BODY if conn.signed_in else MAX_PREAUTH_BODY)
        except HttpError as exc:
            writer.write(error_response(exc.status, exc.message, json=False, close=True))
            return False
        except Refused as exc:
            is_api = request is not None and request.path.startswith("/api/")
            writer.write(error_response(exc.status, exc.message, json=is_api, close=True))
            return False
        except TimeoutError:
            return False
        conn.waiting = False
        assert request is not None
        keep_open = await self._respond(request, sign_in, reader, writer)
        await writer.drain()
        return keep_open and request.keep_alive

    def _admit(self, conn: Conn, request: Request) -> SignIn | None:
        """The gate's verdict on the head; a connection whose request carried the page key
        (or an event-stream ticket) leaves the pre-auth pool (503 when the signed-in
        connections are at their cap). A cookie-only request (the page and its files) is
        answered but leaves its connection in the pre-auth pool: the cookie reaches every
        server on the host, so it must not buy a signed-in place."""
        assert self.gate is not None
        sign_in = self.gate.admit(request)
        if sign_in is not None and not self._pool.promote(conn):
            raise HttpError(503, "too many connections")
        return sign_in

    async def _respond(
        self,
        request: Request,
        sign_in: SignIn | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        """Answer one admitted request; False when the connection must close afterwards."""
        gate = self.gate
        assert gate is not None
        is_api = request.path.startswith("/api/")
        try:
            if is_sign_in(request):
                writer.write(signin.exchange(gate, request))
                return True
            if sign_in is not None and request.method == "POST":
                if request.path == "/api/ticket":
                    writer.write(signin.ticket(gate, sign_in))
                    return True
                if request.path == "/api/signout":
                    writer.write(signin.sign_out(gate))
                    self._close_streams(lambda _: True)
                    return True
            if request.path == "/api/events" and request.method == "GET":
                assert sign_in is not None
                await self._events(request, sign_in, reader, writer)
                return False
            if request.path == "/chat" and request.method == "POST":
                assert sign_in is not None
                await self._compat_chat(request, sign_in, reader, writer)
                return False
            if request.path == "/api/permission/answer":
                self._refuse_unwatched(request, sign_in)
            writer.write(await self._route(request))
        except RpcError as exc:
            writer.write(_rpc_error(exc))
        except Exception:
            log.exception("http request failed", method=request.method, path=request.path)
            message = "internal error (details in the daemon log)"
            writer.write(error_response(500, message, json=is_api))
        return True

    def _refuse_unwatched(self, request: Request, sign_in: SignIn | None) -> None:
        """InvalidParams unless this sign-in holds an event stream of the session whose
        approval it answers (or of its parent: a subagent's events, approvals included, reach
        its parent's stream): a page answers only for sessions it opened."""
        try:
            session_id = msgspec.json.decode(request.body or b"{}").get("sessionId")
        except (msgspec.DecodeError, AttributeError):
            return  # the API call itself answers the bad body
        watched: set[str | None] = set()
        for stream, holder in self._streams.items():
            if holder == sign_in and isinstance(stream, SseStream):
                watched |= {stream.session_id, *stream.seen}
        if session_id not in watched:
            raise InvalidParams(
                f"this page has not opened session {session_id}: only a client watching a "
                "session (its event stream) may answer its permission requests"
            )

    async def _route(self, request: Request) -> bytes:
        """The response to a plain (non-streaming) request."""
        method, path = request.method, request.path
        if path.startswith("/api/") and path != "/api/hello":
            if method != "POST":
                return error_response(405, "API methods take POST", json=True, allow="POST")
            if request.headers.get("content-type", "").split(";")[0] != "application/json":
                return error_response(415, "send the params as application/json", json=True)
            body = await api.call(self.service, path[len("/api/") :], request.body)
            return response(200, JSON, body)
        if method not in ("GET", "HEAD"):
            if path == "/clear" and method == "POST" and self._compat is not None:
                return response(200, JSON, self._compat.clear())
            return error_response(405, "method not allowed", json=False, allow="GET")
        if path == METRICS_PATH and self.metrics is not None:
            body = prometheus_text(self.metrics())
            return response(200, [("Content-Type", CONTENT_TYPE), *COMMON], body)
        if path == "/api/hello":
            return response(200, JSON, _encode(WebHello(version=__version__, cwd=str(Path.cwd()))))
        return self._asset(request)

    def _asset(self, request: Request) -> bytes:
        asset = self._assets.get(request.path)
        if asset is None:
            return error_response(404, "not found", json=False)
        headers = [
            ("Content-Type", asset.content_type),
            ("ETag", asset.etag),
            ("Cache-Control", "no-cache"),
            *COMMON,
        ]
        if asset.content_type.startswith("text/html"):
            headers += [("Content-Security-Policy", CSP), ("X-Frame-Options", "DENY")]
        if request.headers.get("if-none-match") == asset.etag:
            return response(304, headers)
        body = b"" if request.method == "HEAD" else asset.body
        return response(200, headers, body)

    # --- sign-ins and their streams ----------------------------------------------------------

    def _close_streams(self, doomed: Callable[[SignIn], bool]) -> None:
        """Close the event streams whose sign-in is ``doomed``."""
        for stream, sign_in in list(self._streams.items()):
            if doomed(sign_in):
                if isinstance(stream, SseStream):
                    stream.close()
                else:
                    stream.done.set()

    async def _upkeep_loop(self) -> None:
        """Every :data:`UPKEEP_INTERVAL`: an open stream keeps its sign-in alive; expired
        sign-ins, links and tickets are forgotten, and the streams of ended sign-ins close."""
        while True:
            await asyncio.sleep(UPKEEP_INTERVAL)
            assert self.gate is not None
            logins = self.gate.logins
            for sign_in in set(self._streams.values()):
                logins.touch(sign_in)
            logins.prune()
            self._close_streams(lambda sign_in: sign_in.ended)

    # --- streams ---------------------------------------------------------------------------

    async def _events(
        self,
        request: Request,
        sign_in: SignIn,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        session_id = request.query.get("sessionId")
        if not session_id:
            raise InvalidParams("`sessionId` is required - at `?sessionId`")
        since = since_seq(request.headers, request.query)
        transport: Any = writer.transport
        stream = SseStream(transport)
        stream.session_id = session_id
        result = await self.service.subscribe(
            SubscribeParams(session_id=session_id, since_seq=since), stream
        )
        writer.write(response_head(200, SSE_HEADERS))
        stream.send("subscribed", _encode(result))
        self._streams[stream] = sign_in
        try:
            await stream.hold(reader)
        finally:
            self._streams.pop(stream, None)
            self.service.forget(stream)

    async def _compat_chat(
        self,
        request: Request,
        sign_in: SignIn,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        assert self._compat is not None
        transport: Any = writer.transport
        stream = CompatStream(transport)
        await self._compat.start(request.body, stream)
        writer.write(response_head(200, SSE_HEADERS))
        self._streams[stream] = sign_in
        eof = asyncio.ensure_future(reader.read(1))
        done = asyncio.ensure_future(stream.done.wait())
        try:
            await asyncio.wait({eof, done}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            eof.cancel()
            done.cancel()
            self._streams.pop(stream, None)
            self._compat.finish(stream)


def _rpc_error(error: RpcError) -> bytes:
    return response(error.http_status, JSON, api.error_body(error))
