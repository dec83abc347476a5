"""``mcp/list``: what MCP servers a session in a folder gets and how their processes are.

Reads the configuration only (the SDK is not imported); the state comes from the daemon's
pool when it exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentd.config.schema import McpServerSection
from agentd.mcp.servers import ServerDef, gather, read_mcp_json
from agentd.protocol.mcp import McpListResult, McpServerInfo

if TYPE_CHECKING:
    from agentd.mcp.pool import McpPool


def listing(
    configured: Mapping[str, McpServerSection], cwd: Path, pool: McpPool | None
) -> McpListResult:
    """The servers of ``cwd`` (configured, disabled, an untrusted ``.mcp.json``'s), then the
    pool's other servers."""
    found = gather(configured, cwd, None)
    servers = [_configured(d, cwd, pool) for d in found.servers]
    servers += [
        McpServerInfo(name=name, source="config", state="disabled", target=_target(section))
        for name, section in configured.items()
        if not section.enabled
    ]
    if found.untrusted is not None:
        for definition in read_mcp_json(found.untrusted, []):
            info = McpServerInfo(
                name=definition.name,
                source="mcp.json",
                state="untrusted",
                target=definition.target,
                error=f"run `agentctl trust {found.untrusted.parent}` to use it",
            )
            servers.append(info)
    shown = {(s.name, s.target, s.cwd) for s in servers}
    for running in pool.infos() if pool is not None else []:
        if (running.name, running.target, running.cwd) not in shown:
            servers.append(running)
    return McpListResult(servers=servers)


def _configured(definition: ServerDef, cwd: Path, pool: McpPool | None) -> McpServerInfo:
    state = pool.state_of(definition, cwd) if pool is not None else None
    if state is not None:
        return state
    return McpServerInfo(
        name=definition.name,
        source=definition.source,
        state="stopped",
        target=definition.target,
        cwd=str(cwd),
    )


def _target(section: McpServerSection) -> str:
    return section.url or " ".join([section.command or "", *section.args]).strip()


__all__ = ["listing"]
