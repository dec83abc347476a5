"""A protected MCP server and its OAuth authorization server on one loopback port, for the
tests of agentd's MCP client authorization.

``python oauth_server.py [--expires-in SECONDS] [--no-refresh]`` prints ``PORT`` on stdout
once it listens on 127.0.0.1, then serves:

* ``/mcp``: streamable HTTP MCP (the SDK's server, tool ``whoami``); without a valid bearer
  token a 401 whose ``WWW-Authenticate`` names the protected resource metadata;
* ``/.well-known/oauth-protected-resource/mcp`` (RFC 9728) naming this origin as its
  authorization server, ``/.well-known/oauth-authorization-server`` (RFC 8414);
* ``/register`` (RFC 7591 dynamic client registration: public clients, loopback redirects);
* ``/authorize``: approves at once (the user's click) and redirects to the registered
  ``redirect_uri`` with a code and the state; a request with a mismatching redirect, an
  unknown client or no S256 challenge is refused;
* ``/token``: ``authorization_code`` (the PKCE verifier is checked against the challenge,
  the code is single-use) and ``refresh_token`` (rotated); access tokens expire after
  ``--expires-in`` seconds;
* ``/_stats``: counts of registrations, codes, grants, refreshes and refused requests (JSON).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import secrets
import socket
import sys
import time
from typing import Any
from urllib.parse import urlencode

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

mcp = MCPServer("protected")


@mcp.tool()
def whoami() -> str:
    """Say that the caller was authorized."""
    return "authorized"


class AuthServer:
    """The authorization server's state: clients, codes, tokens, counters."""

    def __init__(self, origin: str, expires_in: int, refresh: bool) -> None:
        self.origin = origin
        self.expires_in = expires_in
        self.refresh = refresh
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.access: dict[str, float] = {}
        self.refresh_tokens: dict[str, str] = {}
        self.stats = {
            "registrations": 0,
            "codes": 0,
            "grants": 0,
            "refreshes": 0,
            "refused": 0,
            "unauthorized": 0,
        }

    def valid(self, header: str) -> bool:
        token = header.removeprefix("Bearer ").strip()
        expiry = self.access.get(token)
        return header.startswith("Bearer ") and expiry is not None and time.time() < expiry

    def refuse(self, error: str, status: int = 400) -> Response:
        self.stats["refused"] += 1
        return JSONResponse({"error": error}, status_code=status)

    def issue(self, client_id: str) -> dict[str, Any]:
        access = secrets.token_urlsafe(24)
        self.access[access] = time.time() + self.expires_in
        body: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
        }
        if self.refresh:
            refresh = secrets.token_urlsafe(24)
            self.refresh_tokens[refresh] = client_id
            body["refresh_token"] = refresh
        return body

    # --- endpoints ---------------------------------------------------------------------

    async def resource_metadata(self, request: Request) -> Response:
        return JSONResponse(
            {"resource": f"{self.origin}/mcp", "authorization_servers": [self.origin]}
        )

    async def server_metadata(self, request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.origin,
                "authorization_endpoint": f"{self.origin}/authorize",
                "token_endpoint": f"{self.origin}/token",
                "registration_endpoint": f"{self.origin}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            }
        )

    async def register(self, request: Request) -> Response:
        body = await request.json()
        uris = body.get("redirect_uris") or []
        if not uris or not all(u.startswith("http://127.0.0.1:") for u in uris):
            return self.refuse("invalid_redirect_uri")
        client_id = secrets.token_urlsafe(12)
        self.clients[client_id] = {"redirect_uris": uris}
        self.stats["registrations"] += 1
        answer = {**body, "client_id": client_id, "token_endpoint_auth_method": "none"}
        return JSONResponse(answer, status_code=201)

    async def authorize(self, request: Request) -> Response:
        query = request.query_params
        client = self.clients.get(query.get("client_id", ""))
        redirect = query.get("redirect_uri", "")
        if client is None or redirect not in client["redirect_uris"]:
            return self.refuse("invalid_client")
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return self.refuse("invalid_request")
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "client_id": query["client_id"],
            "challenge": query["code_challenge"],
            "redirect_uri": redirect,
        }
        self.stats["codes"] += 1
        target = f"{redirect}?{urlencode({'code': code, 'state': query.get('state', '')})}"
        return RedirectResponse(target, status_code=302)

    async def token(self, request: Request) -> Response:
        form = await request.form()
        if form.get("grant_type") == "authorization_code":
            return self._code_grant(form)
        if form.get("grant_type") == "refresh_token":
            client_id = self.refresh_tokens.pop(str(form.get("refresh_token", "")), None)
            if client_id is None or client_id != form.get("client_id"):
                return self.refuse("invalid_grant")
            self.stats["refreshes"] += 1
            return JSONResponse(self.issue(client_id))
        return self.refuse("unsupported_grant_type")

    def _code_grant(self, form: Any) -> Response:
        grant = self.codes.pop(str(form.get("code", "")), None)  # single use
        if grant is None or grant["client_id"] != form.get("client_id"):
            return self.refuse("invalid_grant")
        if grant["redirect_uri"] != form.get("redirect_uri"):
            return self.refuse("invalid_grant")
        verifier = str(form.get("code_verifier", "")).encode()
        digest = hashlib.sha256(verifier).digest()
        if base64.urlsafe_b64encode(digest).decode().rstrip("=") != grant["challenge"]:
            return self.refuse("invalid_grant")  # the PKCE check
        self.stats["grants"] += 1
        return JSONResponse(self.issue(grant["client_id"]))

    async def show_stats(self, request: Request) -> Response:
        return JSONResponse(self.stats)


def build(origin: str, expires_in: int, refresh: bool) -> Any:
    """The ASGI app: ``/mcp`` behind the bearer check, the rest the authorization server."""
    server = AuthServer(origin, expires_in, refresh)
    routes = [
        Route("/.well-known/oauth-protected-resource/mcp", server.resource_metadata),
        Route("/.well-known/oauth-authorization-server", server.server_metadata),
        Route("/register", server.register, methods=["POST"]),
        Route("/authorize", server.authorize),
        Route("/token", server.token, methods=["POST"]),
        Route("/_stats", server.show_stats),
    ]
    oauth = Starlette(routes=routes)
    protected = mcp.streamable_http_app(host="127.0.0.1")
    challenge = (
        f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"'
    ).encode()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await protected(scope, receive, send)
            return
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            headers = dict(scope["headers"])
            if not server.valid(headers.get(b"authorization", b"").decode()):
                server.stats["unauthorized"] += 1
                denied = Response(
                    '{"error":"invalid_token"}',
                    status_code=401,
                    headers={"WWW-Authenticate": challenge.decode()},
                    media_type="application/json",
                )
                await denied(scope, receive, send)
                return
            await protected(scope, receive, send)
            return
        await oauth(scope, receive, send)

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--expires-in", type=int, default=3600)
    parser.add_argument("--no-refresh", action="store_true")
    options = parser.parse_args()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    app = build(f"http://127.0.0.1:{port}", options.expires_in, not options.no_refresh)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    sys.stdout.write(f"{port}\n")
    sys.stdout.flush()
    uvicorn.Server(config).run(sockets=[listener])


if __name__ == "__main__":
    main()
