"""A session's MCP servers: which ones it gets, and how their tools join the agent's.

Nothing of :mod:`agentd.mcp` is imported for a session without servers; a session with some
gets an :class:`~agentd.mcp.session.McpSession` as its extra tool source and a tool runner that
sends ``mcp__…`` calls to it (:func:`mcp_runner`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.errors import InvalidParams

if TYPE_CHECKING:
    from agentd.agent.scheduling import ToolRunner
    from agentd.config.schema import McpServerSection
    from agentd.mcp.servers import ServerDef
    from agentd.protocol.mcp import McpServerParam
    from agentd.session.runtime import SessionRuntime
    from agentd.session.settings import SessionTools
    from agentd.session.shared import SharedResources
    from agentd.tools.base import ToolContext, Toolset


def check_mcp_params(servers: Sequence[McpServerParam] | None) -> None:
    """InvalidParams for an ``mcpServers`` entry that cannot be started."""
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
) -> tuple[SessionTools | None, list[str], Path | None]:
    """The session's MCP tool source (None when it has no servers: then nothing of MCP is
    imported), warnings about servers left out, and the ``.mcp.json`` whose servers were not
    started because it is untrusted or not the file trusted (a client may offer to trust its
    folder); ``startup_timeout`` for the servers that do not set their own
    (``mcp_startup_timeout``)."""
    from agentd.mcp.servers import gather

    found = gather(configured, cwd, params, startup_timeout=startup_timeout)
    if not found.servers:
        return None, found.warnings, found.untrusted
    from agentd.mcp.session import McpSession

    pool = shared.mcp_pool()
    tools = McpSession(pool, found.servers, cwd, builtin, context.settings)
    return tools, found.warnings, found.untrusted


def attach_mcp_servers(
    shared: SharedResources, runtime: SessionRuntime, servers: list[McpServerParam]
) -> None:
    """Add ``servers`` (by name) to a loaded session's MCP servers, from its next run on
    (``session/load`` with ``mcpServers``; each given the ``mcp_startup_timeout`` of the
    session's config); InvalidParams for a bad entry."""
    from agentd.mcp.servers import from_param
    from agentd.mcp.session import McpSession

    check_mcp_params(servers)
    cwd = Path(runtime.settings.cwd)
    timeout = shared.config(cwd).settings.mcp_startup_timeout
    definitions = [from_param(server, timeout) for server in servers]
    current = runtime.extra_tools
    if isinstance(current, McpSession):
        current.add(definitions)
        return
    _install(shared, runtime, definitions)


def replace_mcp_servers(
    shared: SharedResources, runtime: SessionRuntime, servers: list[ServerDef]
) -> None:
    """Make ``servers`` the MCP servers of ``runtime``, a session that has not run yet (a
    subagent's, given its parent's): those it found itself were never started."""
    from agentd.mcp.session import McpSession

    current = runtime.extra_tools
    if isinstance(current, McpSession):
        current.servers = list(servers)
    elif servers:
        _install(shared, runtime, servers)


def _install(shared: SharedResources, runtime: SessionRuntime, servers: list[ServerDef]) -> None:
    """Give a session without MCP servers an MCP tool source with ``servers``."""
    from agentd.mcp.session import McpSession

    agent, cwd = runtime.agent, Path(runtime.settings.cwd)
    extra = McpSession(shared.mcp_pool(), servers, cwd, agent.toolset, agent.context.settings)
    extra.warn = runtime.extra_warn
    runtime.extra_tools = agent.tool_source = extra
    agent.run_tool = mcp_runner(agent.run_tool)


def mcp_runner(builtin: ToolRunner) -> ToolRunner:
    """The session's tool runner once it has MCP tools (see :func:`agentd.mcp.tools.runner`)."""
    from agentd.mcp.tools import runner

    return runner(builtin)
