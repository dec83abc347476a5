"""The daemon's side of one JSON-RPC connection: handshake state and event subscription.

:class:`Client` is created by the daemon for every accepted connection. It holds what
``initialize`` established (token check, client info, capabilities) — state the JSON-RPC layer
knows nothing about — and it is the connection's :class:`~agentd.api.subscriber.Subscriber`:
session events become ``session/event`` notifications, permission requests become
``session/requestPermission`` requests, questions ``session/askQuestion`` requests (to a
client that declared the ``questions`` capability).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from agentd.protocol.methods import (
    ClientCapabilities,
    ClientInfo,
    RequestPermissionParams,
    RequestPermissionResult,
)
from agentd.protocol.questions import AskQuestionParams, AskQuestionResult

if TYPE_CHECKING:
    from agentd.api.subscriber import Delivery
    from agentd.protocol.events import PermissionOption
    from agentd.rpc import Connection


class Client:
    """One connection as the server sees it (see the module docstring)."""

    def __init__(self, connection: Connection, *, authorized: bool = True) -> None:
        self.connection = connection
        connection.authorized = authorized
        self.initialized = False
        self.client_info: ClientInfo | None = None
        self.capabilities = ClientCapabilities()

    @property
    def authorized(self) -> bool:
        """False until a TCP client presented the token (its connection limits frame sizes
        until then)."""
        return self.connection.authorized

    @authorized.setter
    def authorized(self, value: bool) -> None:
        self.connection.authorized = value

    @property
    def key(self) -> int:
        return self.connection.id

    @property
    def closed(self) -> bool:
        return self.connection.closed

    @property
    def answers_permissions(self) -> bool:
        return self.capabilities.permissions

    def deliver(self, item: Delivery) -> None:
        self.connection.notify("session/event", msgspec.Raw(item.frame))

    async def drained(self) -> None:
        """Until the connection's queue has drained (the :class:`~agentd.api.subscriber.Paced`
        contract: a long replay to this client is paced by it)."""
        await self.connection.drained()

    async def request_permission(
        self, params: RequestPermissionParams, timeout: float
    ) -> PermissionOption | None:
        """Send ``session/requestPermission``; RpcError/OSError when the client fails."""
        answer = await self.connection.request(
            "session/requestPermission",
            params,
            result_type=RequestPermissionResult,
            timeout=timeout,
        )
        return answer.outcome

    def answers_questions(self) -> bool:
        return self.capabilities.questions and not self.closed

    async def ask_question(self, params: AskQuestionParams, timeout: float) -> AskQuestionResult:
        """Send ``session/askQuestion``; RpcError/OSError when the client fails."""
        result: AskQuestionResult = await self.connection.request(
            "session/askQuestion", params, result_type=AskQuestionResult, timeout=timeout
        )
        return result

    def serves_files(self, *, write: bool) -> bool:
        """Whether this connection declared ``fs.writeTextFile`` (or ``readTextFile``)."""
        if self.closed:
            return False
        fs = self.capabilities.fs
        return fs.write_text_file if write else fs.read_text_file

    async def file_request(
        self, method: str, params: object, result_type: Any, timeout: float | None
    ) -> Any:
        """One ``fs/…`` request to this client (the
        :class:`~agentd.api.subscriber.FileServer` contract)."""
        return await self.connection.request(
            method, params, result_type=result_type, timeout=timeout
        )
