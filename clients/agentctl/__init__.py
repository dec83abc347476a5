"""agentctl: the shell client and async Python client library for agentd.

The library lives in :mod:`agentctl.client`; its main names are re-exported here lazily, so
``import agentctl`` (and the ``agentctl`` command's start-up) stays free of asyncio and msgspec
until they are used::

    from agentctl import connect, spawn_stdio, AgentClient
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentctl.client import (
        AgentClient,
        DaemonUnavailable,
        connect,
        connect_tcp,
        spawn_stdio,
    )
    from agentctl.events import EventStream

__all__ = [
    "AgentClient",
    "DaemonUnavailable",
    "EventStream",
    "connect",
    "connect_tcp",
    "spawn_stdio",
]

_LAZY = {
    "AgentClient": "agentctl.client",
    "DaemonUnavailable": "agentctl.client",
    "connect": "agentctl.client",
    "connect_tcp": "agentctl.client",
    "spawn_stdio": "agentctl.client",
    "EventStream": "agentctl.events",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'agentctl' has no attribute {name!r}")

    return getattr(importlib.import_module(module_name), name)
