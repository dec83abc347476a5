"""A pass-through HTTP proxy that adds one header: ``Authorization: Bearer TOKEN``.

The MCP conformance suite connects to a server URL and cannot be told to send a header, while
``agentd mcp --http`` answers 401 to any request without its token. This proxy forwards every
request verbatim (method, path, query, body, the client's own headers including ``Host`` and
``Origin``) with the token added, and streams the answer back as it comes (SSE included), so
what the suite checks is agentd's answer, not the proxy's.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from tests.harness import wait_until_async

HOP_BY_HOP = {
    b"connection",
    b"keep-alive",
    b"transfer-encoding",
    b"content-length",
    b"te",
    b"trailer",
    b"upgrade",
}


def proxy_app(upstream: str, token: str) -> Starlette:
    """The proxy as an ASGI app forwarding to ``upstream`` (``http://HOST:PORT``)."""
    client = httpx.AsyncClient(timeout=httpx.Timeout(None))

    async def forward(request: Request) -> StreamingResponse:
        headers = [
            (name, value)
            for name, value in request.headers.raw
            if name not in HOP_BY_HOP and name != b"authorization"
        ]
        headers.append((b"authorization", f"Bearer {token}".encode()))
        url = upstream + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        outgoing = client.build_request(
            request.method, url, headers=headers, content=await request.body()
        )
        answer = await client.send(outgoing, stream=True)
        kept = {
            name.decode(): value.decode()
            for name, value in answer.headers.raw
            if name.lower() not in HOP_BY_HOP
        }
        return StreamingResponse(
            answer.aiter_raw(),
            status_code=answer.status_code,
            headers=kept,
            background=BackgroundTask(answer.aclose),
        )

    methods = ["GET", "POST", "DELETE", "PUT", "OPTIONS", "HEAD", "PATCH"]
    routes = [Route("/{path:path}", forward, methods=methods)]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()

    return Starlette(routes=routes, lifespan=lifespan)


@contextlib.asynccontextmanager
async def token_proxy(upstream: str, token: str) -> AsyncIterator[int]:
    """The proxy to ``upstream`` on a free loopback port (yielded) for the ``with`` block;
    then shut down: open streams closed, its HTTP client and listening socket too."""
    import uvicorn

    listening = socket.create_server(("127.0.0.1", 0))
    config = uvicorn.Config(
        proxy_app(upstream, token),
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        await wait_until_async(lambda: server.started or serving.done(), 30, "the proxy")
        if serving.done():
            serving.result()
        yield listening.getsockname()[1]
    finally:
        server.should_exit = True
        await serving
        listening.close()
