"""``agentd mcp --http``: the same MCP server over streamable HTTP (path ``/mcp``), for remote
hosts and for tools that speak only HTTP.

The rules are the daemon's TCP rules: loopback only unless ``--allow-remote``, and every
request carries the token of the token file (0600, created on first use; default
``$XDG_RUNTIME_DIR/agentd/mcp.token``) as ``Authorization: Bearer TOKEN``. A request without
it is answered 401 before the MCP SDK sees it. On a loopback address the SDK's DNS-rebinding
protection is on as well (the ``Host`` and ``Origin`` headers must name the loopback host).
The address and the token's path are printed to stderr once the port is bound.

uvicorn serves the SDK's Starlette application on a socket bound here (so ``:0`` picks a free
port and the real one is printed); its logs go through agentd's logging, its access log is off.
"""

from __future__ import annotations

import contextlib
import hmac
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

from agentd import paths
from agentd.hosts import is_loopback

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

PATH = "/mcp"
GRACE = 5
"""Seconds a stopping server (SIGTERM, Ctrl-C) gives open requests before it closes them;
the turns still running are then cancelled."""


class HttpRefused(Exception):
    """``--http`` cannot start (a remote address without ``--allow-remote``, an unsafe token
    file, a port in use); the message says why and what to do."""


class BearerToken:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer TOKEN`` is answered
    401 with a JSON-RPC error naming the token file; lifespan events pass through."""

    def __init__(self, app: Asgi, token: str, token_file: Path) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.token_file = token_file

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        body = (
            '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"agentd mcp needs '
            f'the token in {self.token_file} as the header Authorization: Bearer TOKEN"}}}}'
        ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="agentd mcp"'),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _authorized(self, scope: Scope) -> bool:
        given = [value for name, value in scope["headers"] if name == b"authorization"]
        return len(given) == 1 and hmac.compare_digest(given[0], self.expected)


def bind(host: str, port: int, *, allow_remote: bool) -> socket.socket:
    """The listening socket; HttpRefused for a remote address without ``allow_remote`` or an
    address that cannot be bound."""
    if not allow_remote and not is_loopback(host):
        raise HttpRefused(
            f"refusing to listen on {host}: not a loopback address (pass --allow-remote to "
            "accept remote hosts; the token then crosses the network in cleartext unless a "
            "TLS proxy is in front)"
        )
    try:
        return socket.create_server((host, port), family=_family(host), reuse_port=False)
    except OSError as exc:
        raise HttpRefused(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def token_for(token_file: Path | None) -> tuple[str, Path]:
    """The token and its file (default :func:`agentd.paths.default_mcp_token_file`), the file
    created when missing and hidden from sandboxed commands."""
    path = token_file or paths.default_mcp_token_file()
    try:
        token = paths.load_or_create_token(path)
    except (paths.UnsafeTokenError, OSError) as exc:
        raise HttpRefused(str(exc)) from None
    paths.add_control_path(path)
    return token, path


async def serve_http(app: Any, sock: socket.socket, token: str, token_file: Path) -> None:
    """Serve the MCP server ``app`` (an ``MCPServer``) on ``sock`` until cancelled."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    starlette = app.streamable_http_app(streamable_http_path=PATH, host=_security_host(host))
    guarded = BearerToken(starlette, token, token_file)
    config = uvicorn.Config(
        guarded,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=GRACE,
    )
    server = _quiet_server(uvicorn)(config)
    shown = f"[{host}]" if ":" in host else host
    print(
        f"agentd mcp: serving http://{shown}:{port}{PATH}; token in {token_file}", file=sys.stderr
    )
    await server.serve(sockets=[sock])


def _quiet_server(uvicorn: Any) -> Any:
    """uvicorn's ``Server`` stopping on SIGTERM / SIGINT without raising the signal again once
    it has stopped (uvicorn does, to end the process at once): ``serve`` returns, and
    ``agentd mcp`` cancels its turns and closes the session files before it exits 0."""

    class Server(uvicorn.Server):  # type: ignore[misc]
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            handled = (signal.SIGINT, signal.SIGTERM)
            before = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

    return Server


def _security_host(host: str) -> str:
    """The host the SDK's DNS-rebinding protection keys on: loopback names it knows."""
    return "127.0.0.1" if host in ("127.0.0.1", "localhost") else host
