"""The HTTP front-end of the daemon: a listener serving the page, the JSON API and events.

Routes (every one behind the checks of :mod:`agentd.web.security`):

=======================  ======================================================================
``GET /?token=T``        exchange a one-time token for the session cookie; 303 to ``/``
``GET /``, ``/ui/…``     the chat page and its files (:mod:`agentd.web.static`)
``GET /api/hello``       ``WebHello``: version, default directory of new sessions
``POST /api/<method>``   the JSON API (:mod:`agentd.web.api`)
``GET /api/events``      ``?sessionId=S[&sinceSeq=N]``: the session's events as SSE
                         (:mod:`agentd.web.sse`); ``Last-Event-ID`` overrides ``sinceSeq``. The
                         first message after the replayed ones is ``event: subscribed`` with the
                         ``session/subscribe`` result
``POST /chat``, ``/clear``  the original single-conversation web mode (:mod:`agentd.web.compat`)
=======================  ======================================================================

The listener runs on the daemon's event loop beside its other transports.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import msgspec
import structlog

from agentd import __version__
from agentd.errors import InvalidParams, RpcError
from agentd.protocol.web import WebHello
from agentd.web import api
from agentd.web.compat import CompatChat, CompatStream
from agentd.web.http import HttpError, Request, read_request, response, response_head
from agentd.web.security import Gate, Refused
from agentd.web.sse import HEADERS as SSE_HEADERS
from agentd.web.sse import SseStream
from agentd.web.static import CSP, load_assets

if TYPE_CHECKING:
    from agentd.session.service import SessionService

log = structlog.get_logger("agentd.web")

DEFAULT_PORT = 8765
IDLE_TIMEOUT = 60.0
"""Seconds a connection may take to send (the rest of) a request before it is closed."""
MAX_CONNECTIONS = 256
"""Open HTTP connections at most (event streams included); more are answered 503."""
COMMON = [("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer")]
JSON = [("Content-Type", "application/json"), ("Cache-Control", "no-store"), *COMMON]
TEXT = [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store"), *COMMON]
_encode = msgspec.json.Encoder().encode


class WebListenError(Exception):
    """The HTTP front-end cannot start (the message says why)."""


class WebServer:
    """Serves HTTP for one daemon on ``host:port`` (port 0: any free port)."""

    def __init__(self, host: str, port: int, *, allow_remote: bool = False) -> None:
        self.host = host
        self.port = port
        self.allow_remote = allow_remote
        self.gate: Gate | None = None
        self._server: asyncio.AbstractServer | None = None
        self._service: SessionService | None = None
        self._compat: CompatChat | None = None
        self._streams: set[SseStream | CompatStream] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._assets = load_assets()

    @property
    def service(self) -> SessionService:
        if self._service is None:
            raise RuntimeError("WebServer used before start()")
        return self._service

    async def start(self, service: SessionService) -> None:
        """Bind; WebListenError for a remote address without ``allow_remote`` or a busy port."""
        from agentd.hosts import is_loopback

        loopback = is_loopback(self.host)
        if not loopback and not self.allow_remote:
            raise WebListenError(
                f"refusing to serve HTTP on {self.host}: not a loopback address "
                "(pass --allow-remote to accept remote browsers)"
            )
        self._service = service
        self._compat = CompatChat(service, str(Path.cwd()))
        try:
            self._server = await asyncio.start_server(
                self._connection, self.host, self.port, limit=16 * 1024
            )
        except OSError as exc:
            raise WebListenError(f"cannot serve HTTP on {self.host}:{self.port}: {exc}") from None
        self.port = self._server.sockets[0].getsockname()[1]
        self.gate = Gate(self.host, self.port, loopback=loopback)
        log.info("serving http", host=self.host, port=self.port, origin=self.gate.origin)

    def link(self, cwd: str | None = None) -> str:
        """A URL of the page with a new one-time token (new sessions start in ``cwd``)."""
        if self.gate is None:
            raise RuntimeError("WebServer used before start()")
        return self.gate.mint_link(urlencode({"cwd": cwd}) if cwd else "")

    def announce(self) -> None:
        """Print the page's link to stderr (the one place the token is shown)."""
        print(f"agentd: web chat at {self.link()}", file=sys.stderr, flush=True)

    async def stop(self) -> None:
        """Stop accepting connections and end the event streams."""
        if self._server is not None:
            self._server.close()
        for stream in list(self._streams):
            if isinstance(stream, SseStream):
                stream.close()
            else:
                stream.done.set()

    async def close(self) -> None:
        """Close every connection."""
        await self.stop()
        for writer in list(self._writers):
            writer.close()
        self._server = None

    # --- connections -----------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._writers) >= MAX_CONNECTIONS:
            writer.write(_error(503, "too many connections", json=False, close=True))
            writer.close()
            return
        self._writers.add(writer)
        try:
            while True:
                try:
                    async with asyncio.timeout(IDLE_TIMEOUT):
                        request = await read_request(reader)
                except HttpError as exc:
                    writer.write(_error(exc.status, exc.message, json=False, close=True))
                    break
                except TimeoutError:
                    break
                if request is None:
                    break
                keep_open = await self._respond(request, reader, writer)
                await writer.drain()
                if not keep_open or not request.keep_alive:
                    break
        except (ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _respond(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must close afterwards."""
        gate = self.gate
        assert gate is not None
        is_api = request.path.startswith("/api/")
        try:
            gate.check_host(request)
            if request.path == "/" and "token" in request.query and request.method == "GET":
                writer.write(self._exchange(gate, request))
                return True
            gate.check_cookie(request)
            gate.check_origin(request)
        except Refused as exc:
            writer.write(_error(exc.status, exc.message, json=is_api, close=True))
            return False
        try:
            if request.path == "/api/events" and request.method == "GET":
                await self._events(request, reader, writer)
                return False
            if request.path == "/chat" and request.method == "POST":
                await self._compat_chat(request, reader, writer)
                return False
            writer.write(await self._route(request))
        except RpcError as exc:
            writer.write(_rpc_error(exc))
        except Exception:
            log.exception("http request failed", method=request.method, path=request.path)
            writer.write(_error(500, "internal error (details in the daemon log)", json=is_api))
        return True

    async def _route(self, request: Request) -> bytes:
        """The response to a plain (non-streaming) request."""
        method, path = request.method, request.path
        if path.startswith("/api/") and path != "/api/hello":
            if method != "POST":
                return _error(405, "API methods take POST", json=True, allow="POST")
            if request.headers.get("content-type", "").split(";")[0] != "application/json":
                return _error(415, "send the params as application/json", json=True)
            body = await api.call(self.service, path[len("/api/") :], request.body)
            return response(200, JSON, body)
        if method not in ("GET", "HEAD"):
            if path == "/clear" and method == "POST" and self._compat is not None:
                return response(200, JSON, self._compat.clear())
            return _error(405, "method not allowed", json=False, allow="GET")
        if path == "/api/hello":
            return response(200, JSON, _encode(WebHello(version=__version__, cwd=str(Path.cwd()))))
        return self._asset(request)

    def _asset(self, request: Request) -> bytes:
        asset = self._assets.get(request.path)
        if asset is None:
            return _error(404, "not found", json=False)
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

    def _exchange(self, gate: Gate, request: Request) -> bytes:
        rest = {k: v for k, v in request.query.items() if k != "token"}
        location = "/" + (f"?{urlencode(rest)}" if rest else "")
        secret = gate.exchange(request.query["token"])
        if secret is None:
            with contextlib.suppress(Refused):
                gate.check_cookie(request)  # an old link opened again by a signed-in browser
                return response(303, [("Location", location), *TEXT])
            return _error(
                401, "this link was used already or has expired: run `agentctl web`", json=False
            )
        headers = [("Location", location), ("Set-Cookie", gate.set_cookie(secret)), *TEXT]
        return response(303, headers)

    # --- streams ---------------------------------------------------------------------------

    async def _events(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        session_id = request.query.get("sessionId")
        if not session_id:
            raise InvalidParams("`sessionId` is required - at `?sessionId`")
        since = _since_seq(request)
        transport: Any = writer.transport
        stream = SseStream(transport)
        result = await self.service.subscribe(session_id, stream, since)
        writer.write(response_head(200, SSE_HEADERS))
        stream.send("subscribed", _encode(result))
        self._streams.add(stream)
        try:
            await stream.hold(reader)
        finally:
            self._streams.discard(stream)
            self.service.unsubscribe(session_id, stream)

    async def _compat_chat(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        assert self._compat is not None
        transport: Any = writer.transport
        stream = CompatStream(transport)
        await self._compat.start(request.body, stream)
        writer.write(response_head(200, SSE_HEADERS))
        self._streams.add(stream)
        eof = asyncio.ensure_future(reader.read(1))
        done = asyncio.ensure_future(stream.done.wait())
        try:
            await asyncio.wait({eof, done}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            eof.cancel()
            done.cancel()
            self._streams.discard(stream)
            self._compat.finish(stream)


def _since_seq(request: Request) -> int | None:
    text = request.headers.get("last-event-id") or request.query.get("sinceSeq")
    if text is None or text == "":
        return None
    if not text.isdigit():
        raise InvalidParams("`sinceSeq` (or Last-Event-ID) must be a number")
    return int(text)


def _error(
    status: int, message: str, *, json: bool, allow: str | None = None, close: bool = False
) -> bytes:
    """An error answer; ``close`` says the connection closes after it."""
    headers = list(JSON if json else TEXT)
    if allow is not None:
        headers.append(("Allow", allow))
    if close:
        headers.append(("Connection", "close"))
    if json:
        body = _encode({"error": {"code": -32600, "message": message}})
    else:
        body = (message + "\n").encode()
    return response(status, headers, body)


def _rpc_error(error: RpcError) -> bytes:
    return response(api.http_status(error), JSON, api.error_body(error))
