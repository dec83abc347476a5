"""The streamable HTTP transport to an MCP server, through the official SDK's client (imported
only when a session's server has a ``url``). ``tools/list`` carries the cursor of the page it
asks for; the SDK's progress callbacks become the listener's ``progressed``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from agentd.mcp.transport import CallFailed, Json, Listener


class HttpTransport:
    """An MCP server at ``url`` (:class:`~agentd.mcp.transport.Transport`), with ``headers``
    on every request."""

    def __init__(self, url: str, headers: Mapping[str, str], listener: Listener) -> None:
        self.url = url
        self.headers = dict(headers)
        self.listener = listener
        self._session: Any = None

    async def open(self, stack: contextlib.AsyncExitStack) -> None:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        from mcp import ClientSession

        client = create_mcp_http_client(headers=self.headers)
        await stack.enter_async_context(client)
        opened = streamable_http_client(self.url, http_client=client)
        read, write = await stack.enter_async_context(opened)
        session = ClientSession(
            read, write, message_handler=self._on_message, elicitation_callback=self._on_elicit
        )
        self._session = await stack.enter_async_context(session)
        await self._session.initialize()

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
        """The SDK result of ``pending`` as the MCP JSON object; its failures CallFailed."""
        from mcp.shared.exceptions import MCPError

        try:
            result = await pending
        except (MCPError, OSError) as exc:
            raise CallFailed(str(exc) or type(exc).__name__) from None
        dumped: Json = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped

    def _progress_callback(self, token: int) -> Any:
        async def callback(progress: float, total: float | None, message: str | None) -> None:
            update = {"progress": progress, "total": total, "message": message}
            self.listener.progressed({"progressToken": token, **update})

        return callback

    async def _on_elicit(self, context: Any, params: Any) -> Any:
        """A server's ``elicitation/create``: the listener's answer as the SDK's result."""
        from mcp.types import ElicitResult

        asked = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        return ElicitResult.model_validate(await self.listener.elicit(asked))

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            self.listener.notified(method)
