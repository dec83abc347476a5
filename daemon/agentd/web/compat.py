"""The single-conversation endpoints of the original web mode, over one daemon session.

``POST /chat`` with ``{"message": "..."}`` runs the agent and answers with Server-Sent Events:
``text`` (``{"content": <text delta>}``), ``tool`` (``{"name", "input"}`` when a tool call
starts), ``error`` (``{"message"}``) and finally ``done`` (``{}``). ``POST /clear`` starts a new
conversation (the old session stays in the store) and answers ``{"status": "ok"}``. The
conversation is an ordinary session, so it also shows up in the page's sidebar and in
``agentctl``.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING

import msgspec

from agentd.errors import InvalidParams
from agentd.protocol.events import AgentEnd, ErrorEvent, MessageUpdate, TextDelta
from agentd.protocol.events import ToolExecutionStart as ToolStart
from agentd.protocol.methods import PromptParams, SessionNewParams, SubscribeParams
from agentd.web.sse import event_bytes

if TYPE_CHECKING:
    from agentd.api.subscriber import Delivery
    from agentd.protocol.events import PermissionOption
    from agentd.protocol.methods import RequestPermissionParams
    from agentd.session.service import SessionService

_encode = msgspec.json.Encoder().encode
_keys = itertools.count(1 << 41)


class ChatMessage(msgspec.Struct, forbid_unknown_fields=True):
    """The body of ``POST /chat``."""

    message: str


class CompatStream:
    """A subscriber turning one run's events into the ``text``/``tool``/``done`` stream. The
    conversation is a top-level session: the events of its subagents (which its subscribers
    receive too, with ``parent_session_id`` set) are not its reply."""

    answers_permissions = False

    def __init__(self, transport: asyncio.WriteTransport) -> None:
        self.key = next(_keys)
        self._transport = transport
        self.done = asyncio.Event()

    @property
    def closed(self) -> bool:
        return self.done.is_set() or self._transport.is_closing()

    def deliver(self, item: Delivery) -> None:
        if item.parent_session_id is not None:  # a subagent's event, not the conversation's
            return
        event = item.event().event
        if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
            self._send("text", {"content": event.delta.text})
        elif isinstance(event, ToolStart):
            self._send("tool", {"name": event.name, "input": event.args})
        elif isinstance(event, ErrorEvent):
            self._send("error", {"message": event.message})
        elif isinstance(event, AgentEnd):
            self._send("done", {})
            self.done.set()

    def _send(self, name: str, data: object) -> None:
        if not self._transport.is_closing():
            self._transport.write(event_bytes(name, _encode(data)))

    async def request_permission(
        self, params: RequestPermissionParams, timeout: float
    ) -> PermissionOption | None:  # pragma: no cover - answers_permissions is False
        return None


class CompatChat:
    """The conversation of ``/chat`` and ``/clear`` (one per server)."""

    def __init__(self, service: SessionService, cwd: str) -> None:
        self.service = service
        self.cwd = cwd
        self.session_id: str | None = None

    async def start(self, body: bytes, stream: CompatStream) -> None:
        """Subscribe ``stream`` and start the run; RpcError before anything is streamed."""
        try:
            text = msgspec.json.decode(body, type=ChatMessage).message
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise InvalidParams(f'expected {{"message": "..."}}: {exc}') from None
        if self.session_id is None:
            info = await self.service.create(SessionNewParams(cwd=self.cwd, title="Web chat"))
            self.session_id = info.session_id
        await self.service.subscribe(SubscribeParams(session_id=self.session_id), stream)
        try:
            await self.service.start_prompt(PromptParams(session_id=self.session_id, text=text))
        except BaseException:
            self.service.forget(stream)
            raise

    def finish(self, stream: CompatStream) -> None:
        """Forget ``stream`` (the response ended or the client left)."""
        self.service.forget(stream)

    def clear(self) -> bytes:
        """Start a new conversation with the next ``/chat``."""
        self.session_id = None
        return b'{"status":"ok"}'
