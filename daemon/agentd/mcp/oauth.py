"""OAuth for streamable HTTP MCP servers (the MCP authorization spec), through the official
SDK's ``OAuthClientProvider``: protected resource metadata (from the 401's
``WWW-Authenticate``, else the ``.well-known`` paths), the authorization server's metadata,
dynamic client registration, PKCE (S256), the authorization code grant and token refresh.
Imported only when a session's server has a ``url`` (it imports the SDK).

Two uses:

* :func:`daemon_auth` for the daemon's connections: it sends the stored token, refreshes it
  when it expired (the new one is stored), and when the server wants an authorization that
  only the user can give (no token, or a refresh refused) it raises :class:`LoginNeeded`
  instead of starting a browser flow nobody would see;
* :func:`login_auth` for ``mcp/login`` (``agentctl mcp login NAME``): the same flow with the
  browser step, whose authorization URL goes to the caller and whose redirect comes back to a
  loopback listener (:mod:`agentd.mcp.login`).

Tokens and registrations are kept in :mod:`agentd.mcp.credentials`, keyed by the server URL.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from agentd import __version__
from agentd.mcp.credentials import CredentialStore, PreRegistered, ServerCredentials
from agentd.mcp.transport import LoginNeeded

PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback"
"""The redirect a daemon connection names when no registration is stored (it never uses it:
it stops before the browser step)."""


def client_metadata(redirect_uri: str) -> OAuthClientMetadata:
    """What agentd registers as: a public native client (no secret; RFC 8252) redirected to
    a loopback address, allowed to refresh."""
    return OAuthClientMetadata(
        client_name="agentd",
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        software_id="agentd",
        software_version=__version__,
    )


class StoredTokenProvider(OAuthClientProvider):
    """The SDK's provider, which also knows when the stored access token expires (the SDK
    computes that only for a token it just received, so a restarted daemon would send an
    expired token instead of refreshing it first)."""

    def __init__(self, url: str, credentials: ServerCredentials, **options: Any) -> None:
        super().__init__(server_url=url, storage=credentials, **options)
        self.credentials = credentials

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self.credentials.expires_at()


def callback_uri(port: int) -> str:
    """The loopback redirect on ``port`` (what :mod:`agentd.mcp.login` listens on)."""
    return f"http://127.0.0.1:{port}/callback"


def registered_redirect(store: CredentialStore, url: str) -> str | None:
    """The redirect URI of the client registered for ``url``, if one is stored."""
    client = store.get(url).get("client") or {}
    uris = client.get("redirect_uris") if isinstance(client, dict) else None
    return str(uris[0]) if isinstance(uris, list) and uris else None


def daemon_auth(
    url: str, store: CredentialStore, client: PreRegistered | None = None
) -> StoredTokenProvider | None:
    """The auth of a daemon connection to ``url``: None when no token is stored (a 401 then
    means :class:`LoginNeeded`, see :mod:`agentd.mcp.http`), else the stored token with
    refresh; a flow that needs the user raises :class:`LoginNeeded`."""
    if not store.has_tokens(url):
        return None

    async def refuse(_authorization_url: str) -> None:
        raise LoginNeeded("the stored authorization was refused and could not be refreshed")

    async def never() -> AuthorizationCodeResult:  # pragma: no cover - refuse raises first
        raise LoginNeeded("no authorization code")

    redirect = registered_redirect(store, url) or PLACEHOLDER_REDIRECT
    if client is not None:
        redirect = callback_uri(client.callback_port or 0)
    return StoredTokenProvider(
        url,
        ServerCredentials(store, url, client, redirect),
        client_metadata=client_metadata(redirect),
        redirect_handler=refuse,
        callback_handler=never,
    )


def login_auth(
    url: str,
    store: CredentialStore,
    redirect_uri: str,
    on_url: Callable[[str], Awaitable[None]],
    wait_code: Callable[[], Awaitable[AuthorizationCodeResult]],
    client: PreRegistered | None = None,
) -> StoredTokenProvider:
    """The auth of a login to ``url``: the whole flow, the authorization URL handed to
    ``on_url`` and the code awaited from ``wait_code`` (the loopback listener at
    ``redirect_uri``). A registration stored for another redirect is dropped first, so the
    server registers this one; a pre-registered ``client`` is used as it is."""
    if client is None and registered_redirect(store, url) not in (None, redirect_uri):
        store.update(url, client=None)
    return StoredTokenProvider(
        url,
        ServerCredentials(store, url, client, redirect_uri),
        client_metadata=client_metadata(redirect_uri),
        redirect_handler=on_url,
        callback_handler=wait_code,
    )
