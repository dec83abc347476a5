"""The method table of a connection: request handlers, notification handlers and guards.

A :class:`Router` is built once and shared by every connection of a daemon (or of a client).
Handlers receive the :class:`~agentd.rpc.connection.Connection` and the decoded params.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

import msgspec

from agentd.errors import InvalidParams
from agentd.rpc.envelope import has_value

Connection: TypeAlias = Any
"""The :class:`~agentd.rpc.connection.Connection` that received the frame: the router only
passes it on to the handler (naming the class here would make the two modules a cycle)."""

Handler = Callable[[Connection, Any], Awaitable[Any] | Any]
"""Answers one request: returns the result (a Struct, None or builtins) or raises RpcError.

An ``async def`` handler runs as its own task, so it may take its time. A plain function runs
inline, before the next frame of the connection is read: use it for quick calls whose effect
later requests rely on (``initialize``), never for anything that blocks."""

NotificationHandler = Callable[[Connection, Any], Awaitable[None] | None]
"""Handles one notification; a returned awaitable runs as its own task."""

Guard = Callable[[Connection, str], None]
"""Runs before every request handler; raises an RpcError to refuse the call."""

log = logging.getLogger("agentd.rpc")
_running: set[asyncio.Task[None]] = set()  # notification handler tasks, kept referenced


class Route(msgspec.Struct, frozen=True):
    """One registered method: its handler and the decoder of its params."""

    method: str
    handler: Any
    params_type: Any
    decoder: msgspec.json.Decoder[Any]
    inline: bool = False

    def decode(self, raw: msgspec.Raw) -> Any:
        """The params as ``params_type``; raises InvalidParams naming the offending field.

        Absent or null params, and an empty array (what Lua clients send for ``{}``), decode
        like ``{}`` for Struct types (so an all-default params Struct is built, and one with
        required fields is refused) and as None otherwise.
        """
        if not has_value(raw) or _empty_array(raw):
            raw = msgspec.Raw(b"{}" if _is_struct(self.params_type) else b"null")
        try:
            return self.decoder.decode(raw)
        except msgspec.ValidationError as exc:
            raise InvalidParams(f"invalid params for {self.method}: {exc}") from None
        except (msgspec.DecodeError, RecursionError, ValueError) as exc:
            raise InvalidParams(f"unreadable params for {self.method}: {exc}") from None


async def _finish_notification(method: str, outcome: Awaitable[None]) -> None:
    try:
        await outcome
    except Exception:
        log.exception("notification handler failed", extra={"method": method})


def _empty_array(raw: msgspec.Raw) -> bool:
    data = bytes(raw)
    return data.startswith(b"[") and data[1:].strip() == b"]"


def _is_struct(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, msgspec.Struct)


class Router:
    """Maps method names to handlers. Not tied to a connection or an event loop."""

    def __init__(self) -> None:
        self._routes: dict[str, Route] = {}
        self._notifications: dict[str, Route] = {}
        self._guards: list[Guard] = []

    def add(self, method: str, handler: Handler, params_type: Any) -> None:
        """Register ``handler`` for requests to ``method``, its params decoded as
        ``params_type`` (``typing.Any`` for plain JSON values). Registering a method twice
        replaces the handler.
        """
        decoder = msgspec.json.Decoder(params_type)
        inline = not inspect.iscoroutinefunction(handler)
        self._routes[method] = Route(method, handler, params_type, decoder, inline)

    def on_notification(
        self, method: str, handler: NotificationHandler, params_type: Any = Any
    ) -> None:
        """Register ``handler`` for notifications ``method`` (params decoded as ``params_type``).

        Notifications whose params do not decode are logged and dropped.
        """
        decoder = msgspec.json.Decoder(params_type)
        self._notifications[method] = Route(method, handler, params_type, decoder)

    def add_guard(self, guard: Guard) -> None:
        """Run ``guard(connection, method)`` before every request; guards run in order."""
        self._guards.append(guard)

    def route(self, method: str) -> Route | None:
        """The request route for ``method``, or None."""
        return self._routes.get(method)

    def notify(self, connection: Connection, method: str, raw: msgspec.Raw) -> None:
        """Dispatch a received notification: decode, call, and run a returned awaitable.

        Unknown methods are ignored; failures are logged, never answered.
        """
        route = self._notifications.get(method)
        if route is None:
            log.debug("notification ignored", extra={"method": method})
            return
        try:
            outcome = route.handler(connection, route.decode(raw))
        except Exception:
            log.exception("notification handler failed", extra={"method": method})
            return
        if outcome is not None and inspect.isawaitable(outcome):
            task = asyncio.get_running_loop().create_task(_finish_notification(method, outcome))
            _running.add(task)
            task.add_done_callback(_running.discard)

    def check(self, connection: Connection, method: str) -> None:
        """Run the guards; they raise RpcError to refuse."""
        for guard in self._guards:
            guard(connection, method)

    def methods(self) -> list[str]:
        """Every request method registered, sorted."""
        return sorted(self._routes)
