"""The session API every front-end programs against, local or remote.

* :class:`SessionApi`: the typed methods of :data:`agentd.protocol.table.METHODS` (those with
  a ``call``), each ``async def name(self, params: XParams, subscriber=None) -> XResult``.
  :class:`agentd.session.service.SessionService` satisfies it in-process;
  :class:`~agentd.api.remote.RemoteSessions` over any JSON-RPC connection (the shared
  daemon's socket, a private ``agentd --stdio``, TCP).
* The event contract (:mod:`agentd.api.subscriber`): a caller that passes a
  :class:`~agentd.api.subscriber.Subscriber` receives the session's events as
  :class:`~agentd.api.subscriber.Delivery` items, the same from both implementations
  (:class:`~agentd.api.subscriber.QueueSubscriber`: an async iterator of ``SessionEvent``).
* :func:`refuse_local_only`: the one check of the fields a transport may not carry.

Start-up cost: imports only the protocol types and :mod:`agentd.errors` (agentctl imports
this unit; nothing of the session machinery).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentd.api.contract import SessionApi, refuse_local_only
    from agentd.api.remote import RemoteSessions
    from agentd.api.subscriber import Delivery, QueueSubscriber, Subscriber

_HOMES = {
    "SessionApi": "agentd.api.contract",
    "refuse_local_only": "agentd.api.contract",
    "RemoteSessions": "agentd.api.remote",
    "Delivery": "agentd.api.subscriber",
    "QueueSubscriber": "agentd.api.subscriber",
    "Subscriber": "agentd.api.subscriber",
}

__all__ = [
    "Delivery",
    "QueueSubscriber",
    "RemoteSessions",
    "SessionApi",
    "Subscriber",
    "refuse_local_only",
]


def __getattr__(name: str) -> Any:
    """The names above, each imported from its module on first use (a lazy boundary: the
    daemon's start-up path needs only ``refuse_local_only``, agentctl's the remote client)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentd.api' has no attribute {name!r}")
    return getattr(import_module(home), name)
