"""A session's MCP servers: which ones it gets, and how their tools join the agent's.

Nothing of :mod:`agentd.mcp` is imported for a session without servers; a session with some
gets an :class:`~agentd.mcp.session.McpSession` as its extra tool source (made by its runtime,
which gives it where warnings go) and a tool runner that sends ``mcp__…`` calls to it
(:func:`mcp_runner`). A loaded session given servers gets them through the same path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.errors import InvalidParams

if TYPE_CHECKING:
    from agentd.agent.scheduling import ToolRunner
    from agentd.config.schema import McpServerSection
    from agentd.mcp.servers import ServerDef
    from agentd.protocol.mcp import McpServerParam
    from agentd.session.runtime import SessionRuntime
    from agentd.session.settings import SessionTools, ToolsMaker
    from agentd.session.shared import SharedResources
    from agentd.tools.base import ToolContext, Toolset


def check_mcp_params(servers: Sequence[McpServerParam] | None) -> None:
    """InvalidParams for an ``mcpServers`` entry that cannot be started."""
    if not servers:
        return
    from agentd.mcp.servers import from_param

    for index, server in enumerate(servers or ()):
        try:
            from_param(server)
        except ValueError as exc:
            raise InvalidParams(f"{exc} - at `$.mcpServers[{index}]`") from None


def session_mcp_tools(
    shared: SharedResources,
    configured: Mapping[str, McpServerSection],
    cwd: Path,
    params: Sequence[McpServerParam] | None,
    builtin: Toolset,
    context: ToolContext,
    startup_timeout: float,
) -> tuple[ToolsMaker | None, list[str], Path | None]:
    """What makes the session's MCP tool source around its runtime's warnings (None when it
    has no servers: then nothing of MCP is imported), warnings about servers left out, and the
    ``.mcp.json`` whose servers were not started because it is untrusted or not the file
    trusted (a client may offer to trust its folder); ``startup_timeout`` for the servers
    that do not set their own
    (``mcp_startup_timeout``)."""
    from agentd.mcp.servers import gather

    found = gather(configured, cwd, params, startup_timeout=startup_timeout)
    if not found.servers:
        return None, found.warnings, found.untrusted
    from agentd.mcp.session import McpSession

    pool, servers, settings = shared.mcp_pool(), found.servers, context.settings

    def make(warn: Callable[[str], None]) -> SessionTools:
        return McpSession(pool, servers, cwd, builtin, settings, warn)

    return make, found.warnings, found.untrusted


def add_mcp_servers(
    shared: SharedResources, runtime: SessionRuntime, servers: list[McpServerParam]
) -> bool:
    """Add ``servers`` (by name) to a loaded session that has MCP servers already, from its
    next run on (``session/load`` with ``mcpServers``; each given the ``mcp_startup_timeout``
    of the session's config); False when it has none (the manager then builds the session
    again with them, through the path that creates it). InvalidParams for a bad entry."""
    from agentd.mcp.servers import from_param
    from agentd.mcp.session import McpSession

    check_mcp_params(servers)
    current = runtime.extra_tools
    if not isinstance(current, McpSession):
        return False
    timeout = shared.config(Path(runtime.settings.cwd)).settings.mcp_startup_timeout
    current.add([from_param(server, timeout) for server in servers])
    return True


def replace_mcp_servers(
    shared: SharedResources, runtime: SessionRuntime, servers: list[ServerDef]
) -> None:
    """Make ``servers`` the MCP servers of ``runtime``, a session that has not run yet (a
    subagent's, given its parent's): those it found itself were never started. A child
    created without MCP servers gets its tool source here, the one place a runtime's tools
    are set after it was built."""
    from agentd.mcp.session import McpSession

    current = runtime.extra_tools
    if isinstance(current, McpSession):
        current.servers = list(servers)
        return
    if not servers:
        return
    agent, cwd = runtime.agent, Path(runtime.settings.cwd)
    extra = McpSession(
        shared.mcp_pool(), servers, cwd, agent.toolset, agent.context.settings, runtime.extra_warn
    )
    runtime.extra_tools = agent.tool_source = extra
    agent.run_tool = mcp_runner(agent.run_tool)


def mcp_runner(builtin: ToolRunner) -> ToolRunner:
    """The session's tool runner once it has MCP tools (see :func:`agentd.mcp.tools.runner`)."""
    from agentd.mcp.tools import runner

    return runner(builtin)
