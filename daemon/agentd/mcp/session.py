"""One session's MCP servers: started at its first run, their tools joined to its built-in
ones, refreshed between turns when a server announces a new list.

A server that cannot be started (or died and may not be restarted yet) is reported once per
session as a ``session_warning`` naming it; its tools are left out and the session works on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from agentd.log import get_logger
from agentd.mcp.connection import Connection, StartFailed
from agentd.mcp.pool import McpPool
from agentd.mcp.servers import ServerDef, qualified_name
from agentd.mcp.tools import McpTool
from agentd.tools.base import Tool, Toolset
from agentd.tools.process.environment import child_env
from agentd.toolspec import ToolSpec

if TYPE_CHECKING:
    from agentd.tools.defaults import ToolSettings

Warn = Callable[[str], None]
log = get_logger("agentd.mcp")


class McpSession:
    """The MCP servers of one session (see the module docstring)."""

    def __init__(
        self,
        pool: McpPool,
        servers: list[ServerDef],
        cwd: Path,
        builtin: Toolset,
        settings: ToolSettings,
        warn: Warn | None = None,
    ) -> None:
        self.pool = pool
        self.servers = servers
        self.cwd = cwd
        self.builtin = builtin
        self.settings = settings
        self.connections: dict[str, Connection] = {}
        self._warned: set[str] = set()
        self._changed = False
        self.warn: Warn = (lambda _text: None) if warn is None else warn
        """Where warnings go (the session runtime sets it: ``session_warning`` events)."""

    def add(self, servers: list[ServerDef]) -> None:
        """Add (or replace, by name) servers; they start at the next :meth:`prepare`."""
        names = {server.name for server in servers}
        for definition in self.servers:
            if definition.name in names:
                self.pool.release(definition, self.cwd, self)
                self.connections.pop(definition.name, None)
        self.servers = [d for d in self.servers if d.name not in names] + servers

    async def prepare(self) -> Toolset:
        """Start the servers not running (concurrently) and return the session's tools:
        the built-in ones, then each running server's."""
        await asyncio.gather(*(self._ensure(d, self.warn) for d in self.servers))
        self._changed = False
        return self.toolset()

    async def refresh(self) -> Toolset | None:
        """A new toolset when a server announced a new tool list since the last one, else
        None (called by the agent loop before each turn)."""
        if not self._changed:
            return None
        self._changed = False
        for connection in list(self.connections.values()):
            if connection.stale and connection.alive:
                try:
                    await connection.refresh_tools()
                except Exception as exc:
                    name = connection.definition.name
                    log.warning("mcp tools/list failed", server=name, error=str(exc))
        return self.toolset()

    def toolset(self) -> Toolset:
        by_name = dict(self.builtin.by_name)
        specs = list(self.builtin.specs)
        for definition in self.servers:
            connection = self.connections.get(definition.name)
            if connection is None or not connection.alive:
                continue
            for listed in connection.tools:
                name = qualified_name(definition.name, listed["name"])
                if not definition.offers(listed["name"]) or name in by_name:
                    continue
                tool = McpTool(
                    name, definition.name, listed, self._getter(definition.name),
                    definition.tool_timeout, definition.trust_annotations,
                )  # fmt: skip
                by_name[name] = cast(Tool, tool)
                specs.append(ToolSpec(name, tool.description, tool.schema))
        return Toolset(by_name, specs)

    async def close(self) -> None:
        """Release every server (the pool stops them once idle)."""
        for definition in self.servers:
            self.pool.release(definition, self.cwd, self)
        self.connections.clear()

    async def _ensure(self, definition: ServerDef, warn: Warn) -> None:
        current = self.connections.get(definition.name)
        if current is not None and current.alive:
            return
        env = child_env(None, self.settings) | dict(definition.env)
        try:
            connection = await self.pool.acquire(definition, self.cwd, self, env, self._on_change)
        except StartFailed as exc:
            self.connections.pop(definition.name, None)
            if definition.name not in self._warned:
                self._warned.add(definition.name)
                warn(
                    f"MCP server {definition.name} ({definition.target}) is not available: "
                    f"{exc}; its tools are left out of this session"
                )
            return
        self.connections[definition.name] = connection
        self._warned.discard(definition.name)

    def _on_change(self) -> None:
        self._changed = True

    def _getter(self, name: str) -> Callable[[], Connection | None]:
        return lambda: self.connections.get(name)
