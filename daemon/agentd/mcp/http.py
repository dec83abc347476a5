"""The streamable HTTP transport to an MCP server, through the official SDK's client (imported
only when a session's server has a ``url``). ``tools/list`` carries the cursor of the page it
asks for; the SDK's progress callbacks become the listener's ``progressed``.

Authorization (:mod:`agentd.mcp.oauth`): a token stored for the URL is sent (and refreshed);
a server that answers 401 without one, or refuses the stored one, fails the start with
:class:`~agentd.mcp.transport.LoginNeeded` (the SDK itself would only say "Server returned an
error response").
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from agentd.mcp.credentials import CredentialStore, PreRegistered
from agentd.mcp.transport import CallFailed, Json, Listener, LoginNeeded


class HttpTransport:
    """An MCP server at ``url`` (:class:`~agentd.mcp.transport.Transport`), with ``headers``
    on every request."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        listener: Listener,
        auth: Any = None,
        store: CredentialStore | None = None,
        client: PreRegistered | None = None,
    ) -> None:
        """``auth``: the httpx2 auth to use (a login's); else the stored token of ``store``
        (default: the user's credential file) for ``url``, if any, refreshed as ``client``
        (a pre-registered one) when given."""
        self.url = url
        self.headers = dict(headers)
        self.listener = listener
        self.auth = auth
        self.store = store
        self.client = client
        self._session: Any = None
        self._unauthorized = 0
        """401 answers of the server itself so far."""

    async def open(self, stack: contextlib.AsyncExitStack) -> None:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        from agentd.mcp.oauth import daemon_auth
        from mcp import ClientSession

        auth = self.auth or daemon_auth(self.url, self.store or CredentialStore(), self.client)
        client = create_mcp_http_client(headers=self.headers, auth=auth)
        client.event_hooks["response"].append(self._saw)
        await stack.enter_async_context(client)
        opened = streamable_http_client(self.url, http_client=client)
        read, write = await stack.enter_async_context(opened)
        session = ClientSession(read, write, message_handler=self._on_message)
        self._session = await stack.enter_async_context(session)
        await self._dumped(self._session.initialize())

    def failure(self, exc: BaseException) -> str | None:
        """An HTTP-level failure (no connection, a timeout…) named with the URL."""
        said = _transport_error(exc)
        return None if said is None else f"cannot reach {self.url}: {said}"

    async def _saw(self, response: Any) -> None:
        """Note a 401 from the server itself (not from its authorization server)."""
        if response.status_code == 401 and str(response.request.url).startswith(self.url):
            self._unauthorized += 1

    async def list_tools(self, cursor: str | None) -> Json:
        from mcp.types import PaginatedRequestParams

        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        return await self._dumped(self._live().list_tools(params=params))

    async def call_tool(
        self, name: str, arguments: Json, timeout: float, progress_token: int | None
    ) -> Json:
        callback = None if progress_token is None else self._progress_callback(progress_token)
        call = self._live().call_tool(
            name, arguments, read_timeout_seconds=timeout, progress_callback=callback
        )
        return await self._dumped(call)

    def _live(self) -> Any:
        if self._session is None:
            raise CallFailed("the server is not running")
        return self._session

    async def _dumped(self, pending: Any) -> Json:
        """The SDK result of ``pending`` as the MCP JSON object; its failures CallFailed, or
        LoginNeeded when the server answered 401 meanwhile."""
        from mcp.shared.exceptions import MCPError

        refused = self._unauthorized
        try:
            result = await pending
        except (MCPError, OSError) as exc:
            if self._unauthorized > refused:
                raise LoginNeeded("the server answered 401 Unauthorized") from None
            raise CallFailed(str(exc) or type(exc).__name__) from None
        dumped: Json = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped

    def _progress_callback(self, token: int) -> Any:
        async def callback(progress: float, total: float | None, message: str | None) -> None:
            update = {"progress": progress, "total": total, "message": message}
            self.listener.progressed({"progressToken": token, **update})

        return callback

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            self.listener.notified(method)


def _transport_error(exc: BaseException) -> str | None:
    """What an HTTP-level failure (no connection, a timeout…) said, found in ``exc`` or the
    groups anyio wraps it in; None for any other failure."""
    import httpx2

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, httpx2.TransportError):
        return str(exc) or type(exc).__name__
    return None
