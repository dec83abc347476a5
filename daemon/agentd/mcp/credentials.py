"""The MCP servers' OAuth credentials: one private file, ``credentials_dir() /
"mcp-oauth.json"`` (folder 0700, file 0600, written whole to a temporary file and renamed,
under a lock so a refresh in the daemon and a login from ``agentctl mcp login`` never lose
each other's writes). The folder is one of :func:`agentd.paths.control_paths`: sandboxed
commands do not see it.

Entries are keyed by the server's URL (what the tokens were issued for), never by its name:
a project that names another server with a known name gets no token for it. Each entry holds
the client registration (``client``), the tokens (``tokens``) and when the access token
expires (``expires_at``, seconds since the epoch). Tokens never reach session files or logs:
only this module reads or writes them, and errors name the server, not the token.

:class:`ServerCredentials` is the SDK's ``TokenStorage`` for one URL (its models are imported
only when called: this module itself imports none of the SDK).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from agentd.paths import credentials_dir

FILE_NAME = "mcp-oauth.json"
Entry = dict[str, Any]


def default_path() -> Path:
    """Where the credentials are kept (read from the environment when called)."""
    return credentials_dir() / FILE_NAME


class CredentialStore:
    """The credentials file at ``path`` (default :func:`default_path`)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()

    def get(self, url: str) -> Entry:
        """The entry of ``url`` (empty when there is none or the file cannot be read)."""
        entry = self._read().get(url)
        return dict(entry) if isinstance(entry, dict) else {}

    def update(self, url: str, **fields: Any) -> None:
        """Set ``fields`` of the entry of ``url`` (a None value removes the field)."""
        with self._locked():
            servers = self._read()
            entry = dict(servers.get(url) or {})
            for key, value in fields.items():
                if value is None:
                    entry.pop(key, None)
                else:
                    entry[key] = value
            servers[url] = entry
            self._write(servers)

    def forget(self, url: str) -> bool:
        """Remove everything stored for ``url``; whether there was something."""
        with self._locked():
            servers = self._read()
            found = servers.pop(url, None) is not None
            if found:
                self._write(servers)
        return found

    def has_tokens(self, url: str) -> bool:
        return bool(self.get(url).get("tokens"))

    # --- the file ----------------------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        try:
            with self.path.open(encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        return servers if isinstance(servers, dict) else {}

    def _write(self, servers: dict[str, Any]) -> None:
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"servers": servers}, handle, indent=1, sort_keys=True)
        temporary.replace(self.path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path.parent.chmod(0o700)
        lock = self.path.with_name(f".{self.path.name}.lock")
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


class PreRegistered(msgspec.Struct, frozen=True):
    """A client registered with the authorization server beforehand (the server's table:
    ``oauth_client_id``, the secret read from the daemon's ``oauth_client_secret_env``
    variable, ``oauth_callback_port``): used instead of a dynamic registration."""

    client_id: str
    secret: str | None = None
    callback_port: int | None = None

    @classmethod
    def of(
        cls, client_id: str | None, secret_env: str | None, port: int | None
    ) -> PreRegistered | None:
        """The pre-registered client a server's table names (None when it names none)."""
        if not client_id:
            return None
        secret = os.environ.get(secret_env) if secret_env else None
        return cls(client_id, secret or None, port)


class ServerCredentials:
    """The SDK's ``TokenStorage`` for the server at ``url``, backed by ``store``; with
    ``client``, that client instead of a stored registration (redirected to ``redirect``)."""

    def __init__(
        self,
        store: CredentialStore,
        url: str,
        client: PreRegistered | None = None,
        redirect: str | None = None,
    ) -> None:
        self.store = store
        self.url = url
        self.client = client
        self.redirect = redirect

    def expires_at(self) -> float | None:
        """When the stored access token expires (None: not known)."""
        value = self.store.get(self.url).get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = self.store.get(self.url).get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: Any) -> None:
        dumped = tokens.model_dump(mode="json", exclude_none=True)
        expires = time.time() + tokens.expires_in if tokens.expires_in else None
        self.store.update(self.url, tokens=dumped, expires_at=expires, updated=time.time())

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        if self.client is not None:
            return OAuthClientInformationFull(
                client_id=self.client.client_id,
                client_secret=self.client.secret,
                token_endpoint_auth_method="client_secret_basic" if self.client.secret else "none",
                redirect_uris=[self.redirect] if self.redirect else None,  # type: ignore[list-item]
            )
        client = self.store.get(self.url).get("client")
        return OAuthClientInformationFull.model_validate(client) if client else None

    async def set_client_info(self, client_info: Any) -> None:
        self.store.update(self.url, client=client_info.model_dump(mode="json", exclude_none=True))
