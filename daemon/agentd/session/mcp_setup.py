"""A session's MCP servers: which ones it gets, and how their tools join the agent's.

Nothing of :mod:`agentd.mcp` is imported for a session without servers; a session with some
gets an :class:`~agentd.mcp.session.McpSession` as its extra tool source (made around its
sink's warnings when the session is assembled) and a tool runner that sends ``mcp__…`` calls
to it (:func:`mcp_runner`). A subagent's servers are its parent's, given when it is built
(:class:`McpChoice`); a loaded session given servers gets them through the same path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

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


class McpChoice(NamedTuple):
    """Which MCP servers a session gets: ``given`` (a subagent's: exactly its parent's,
    narrowed; None: the ``configured`` ones and the client's ``params``), each of those
    started within ``startup_timeout`` unless it sets its own (``mcp_startup_timeout``)."""

    configured: Mapping[str, McpServerSection]
    params: Sequence[McpServerParam] | None
    startup_timeout: float
    given: Sequence[ServerDef] | None = None


def session_mcp_tools(
    shared: SharedResources, choice: McpChoice, cwd: Path, builtin: Toolset, context: ToolContext
) -> tuple[ToolsMaker | None, list[str], Path | None]:
    """What makes the session's MCP tool source around its sink's warnings (None when it has
    no servers: then nothing of MCP is imported), warnings about servers left out, and the
    ``.mcp.json`` whose servers were not started because it is untrusted or not the file
    trusted (a client may offer to trust its folder)."""
    if choice.given is not None:
        servers, warnings, untrusted = list(choice.given), [], None
    else:
        from agentd.mcp.servers import gather

        found = gather(
            choice.configured, cwd, choice.params, startup_timeout=choice.startup_timeout
        )
        servers, warnings, untrusted = found.servers, found.warnings, found.untrusted
    if not servers:
        return None, warnings, untrusted
    from agentd.mcp.session import McpSession

    pool, settings = shared.mcp_pool(), context.settings

    def make(warn: Callable[[str], None]) -> SessionTools:
        return McpSession(pool, servers, cwd, builtin, settings, warn)

    return make, warnings, untrusted


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


def mcp_runner(builtin: ToolRunner) -> ToolRunner:
    """The session's tool runner once it has MCP tools (see :func:`agentd.mcp.tools.runner`)."""
    from agentd.mcp.tools import runner

    return runner(builtin)
