"""What a subagent may use: its profile's tools, never more than its parent has.

A child's tools are the **intersection** of its profile's ``tools`` (none listed: every tool)
and the tools its parent session has at the moment of the ``task`` call — the built-in ones
and the parent's MCP tools (``mcp__SERVER__TOOL``). A profile names built-in tools exactly and
MCP tools exactly or by glob (``mcp__github__*``, ``mcp__*``); a listed tool the parent lacks
is simply left out, while a name that is neither a built-in tool nor an MCP tool is an error
(a typo in the profile). ``task`` is kept only when the profile lists it (and the child is
not at the deepest level).

The child's MCP servers are its parent's (the same processes, from the daemon's pool), each
narrowed to the tools the child may use; a server none of whose tools it may use is not
given to it.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

import msgspec

from agentd.tools import TOOLS
from agentd.tools.base import ToolError

if TYPE_CHECKING:
    from agentd.config.agents import AgentProfile
    from agentd.mcp.servers import ServerDef
    from agentd.session.runtime import SessionRuntime
    from agentd.tools.base import Toolset

MCP_PREFIX = "mcp__"


class ChildTools(msgspec.Struct, frozen=True):
    """A child's tools: built-in names (``session/new``'s ``tools``) and, by MCP server
    name, the server's own names of the tools it may call."""

    builtin: list[str]
    mcp: dict[str, tuple[str, ...]]


def child_tools(profile: AgentProfile, parent: Toolset, *, allow_task: bool) -> ChildTools:
    """The tools of a child started with ``profile`` by a session whose tools are
    ``parent`` (see the module docstring); ToolError naming a profile's unknown tools.
    ``allow_task``: the child may start subagents itself if its profile lists ``task``."""
    wanted = profile.tools
    unknown = [n for n in wanted or () if n not in TOOLS and not n.startswith(MCP_PREFIX)]
    if unknown:
        raise ToolError(
            f"Agent profile {profile.name!r} names unknown tools: {', '.join(unknown)}."
        )
    builtin = [
        name
        for name in parent.by_name
        if name in TOOLS and (wanted is None or name in wanted) and name != "task"
    ]
    if allow_task and wanted is not None and "task" in wanted and "task" in parent.by_name:
        builtin.append("task")
    return ChildTools(builtin=builtin, mcp=_mcp_tools(parent, wanted))


def _mcp_tools(parent: Toolset, wanted: tuple[str, ...] | None) -> dict[str, tuple[str, ...]]:
    """The parent's MCP tools that ``wanted`` allows, by server."""
    patterns = None if wanted is None else [p for p in wanted if p.startswith(MCP_PREFIX)]
    allowed: dict[str, list[str]] = {}
    for name, tool in parent.by_name.items():
        server, tool_name = getattr(tool, "server", None), getattr(tool, "tool_name", None)
        if not name.startswith(MCP_PREFIX) or server is None or tool_name is None:
            continue
        if patterns is None or any(fnmatchcase(name, p) for p in patterns):
            allowed.setdefault(str(server), []).append(str(tool_name))
    return {server: tuple(names) for server, names in allowed.items()}


def inherited_mcp_servers(parent: SessionRuntime, tools: ChildTools) -> list[ServerDef]:
    """The MCP servers a child of ``parent`` gets, in place of any it would find itself: the
    parent's, each narrowed to ``tools.mcp`` (none when the parent has no MCP servers)."""
    if parent.extra_tools is None:
        return []  # no MCP in the family: nothing of it is imported
    from agentd.mcp.session import McpSession

    source = parent.extra_tools
    if not isinstance(source, McpSession):
        return []
    return [
        msgspec.structs.replace(server, enabled_tools=tools.mcp[server.name])
        for server in source.servers
        if server.name in tools.mcp
    ]
