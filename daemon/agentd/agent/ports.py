"""The ports the agent loop calls out to besides its sink, authorizer and tool runner: the
context transform (compaction, as a value the loop adopts) and the source of tools that come
and go (MCP servers). Their owners (the session runtime) implement them; the loop only calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, Protocol

from agentd.agent.run import ModelBinding
from agentd.protocol.content import Message
from agentd.tools.base import Toolset

CompactReason = Literal["threshold", "overflow"]
ContextTransform = Callable[
    [list[Message], CompactReason, ModelBinding], Awaitable[list[Message] | None]
]
"""Called before each model call (``threshold``) and once after a context-overflow error
(``overflow``) with a copy of the context and the run's model (which compacts it); returns
the context the loop continues with (a compaction: the summary and the kept recent messages),
or None to keep it as it is."""


class ToolSource(Protocol):
    """Tools that come and go (MCP servers): :meth:`prepare` gives the toolset at the start
    of a run (after ``agent_start``), :meth:`refresh` a new one before a turn when it
    changed (else None)."""

    async def prepare(self) -> Toolset: ...

    async def refresh(self) -> Toolset | None: ...
