"""Where a session's MCP servers come from, merged by name (later wins):

1. the user configuration's ``[mcp_servers.NAME]`` tables (and a trusted project's
   ``.agentd.toml``: an untrusted one cannot add servers, see :mod:`agentd.config.trust`);
2. the project's ``.mcp.json`` (``{"mcpServers": {NAME: {command, args, env} | {type: "http",
   url, headers}}}``), found at or above the session's cwd up to the repository root, read
   **only when the folder is trusted and the file is the one trusted** (its content is
   pinned, :mod:`agentd.protocol.trust_list`: one that changed or appeared since is not
   read); otherwise nothing of it starts and a warning names the servers and the
   ``agentctl trust`` command;
3. the ``mcpServers`` of ``session/new`` (the ACP shape), for that session only.

A server name may not hold ``__`` or end with ``_`` (:func:`server_name_problem`): a bad one
in ``session/new`` is the client's error, in ``.mcp.json`` a warning. Tool annotations
(``readOnlyHint``) count only for a server of the user's own config with
``trust_annotations = true`` (:attr:`ServerDef.trust_annotations`).

Nothing here imports the MCP SDK: a session without servers never pays for it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from agentd.config.schema import McpServerSection
from agentd.config.trust import file_trust, unsafe_file_reason
from agentd.protocol.control_pins import read_regular
from agentd.protocol.mcp import McpServerParam, server_name_problem

MCP_JSON = ".mcp.json"
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")
MAX_TOOL_NAME = 64
MAX_MCP_JSON_BYTES = 1024 * 1024
DEFAULT_STARTUP_TIMEOUT = 30.0
"""Seconds a server has to start and initialize unless configured otherwise."""


class ServerDef(msgspec.Struct, frozen=True):
    """One MCP server definition. ``key`` identifies the process: two sessions whose
    definitions have the same key (and cwd) share one server process."""

    name: str
    source: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    tool_timeout: float = 600.0
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    trust_annotations: bool = False
    """Whether the server's tool annotations (``readOnlyHint``) are believed: only for a
    ``config`` server whose table in the user's own file says so."""
    oauth_client_id: str | None = None
    oauth_client_secret_env: str | None = None
    oauth_callback_port: int | None = None
    """A pre-registered OAuth client (``agentctl mcp login`` registers none then)."""

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes the process: everything but the name, source and tool filters."""
        return (self.command, self.args, self.env, self.cwd, self.url, self.headers)

    @property
    def target(self) -> str:
        """The command line or URL (for ``mcp/list`` and warnings; no env, no headers)."""
        return self.url or " ".join([self.command or "", *self.args]).strip()

    def offers(self, tool: str) -> bool:
        """Whether the tool ``tool`` of this server is given to the model."""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools


class Gathered(msgspec.Struct):
    """A session's servers and the warnings about the ones left out."""

    servers: list[ServerDef]
    warnings: list[str]
    untrusted: Path | None = None


def gather(
    configured: Mapping[str, McpServerSection],
    cwd: Path,
    params: Sequence[McpServerParam] | None,
    env: Mapping[str, str] | None = None,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
) -> Gathered:
    """The servers of a session in ``cwd`` (see the module docstring); disabled ones are
    left out; a server gets ``startup_timeout`` seconds to start unless its table sets its
    own. Raises ValueError for a bad ``mcpServers`` entry (the client's mistake)."""
    env = os.environ if env is None else env
    merged: dict[str, ServerDef] = {}
    warnings: list[str] = []
    for name, section in configured.items():
        merged[name] = from_section(name, section, "config", startup_timeout)
    found = find_mcp_json(cwd, env)
    untrusted = None
    if found is not None:
        trusted, definitions = _pinned_mcp_json(found, env, warnings, startup_timeout)
        if trusted:
            merged.update((definition.name, definition) for definition in definitions)
        else:
            untrusted = found
    for param in params or ():
        merged[param.name] = from_param(param, startup_timeout)
    servers = [d for d in merged.values() if d.command or d.url]
    disabled = {name for name, s in configured.items() if not s.enabled}
    return Gathered([d for d in servers if d.name not in disabled], warnings, untrusted)


def _pinned_mcp_json(
    path: Path, env: Mapping[str, str], warnings: list[str], startup_timeout: float
) -> tuple[bool, list[ServerDef]]:
    """Whether the ``.mcp.json`` ``path`` is trusted (its folder trusted, its bytes the ones
    pinned), and its servers (read from the bytes that were checked); a warning otherwise."""
    try:
        data = read_regular(path, MAX_MCP_JSON_BYTES)
    except OSError as exc:
        warnings.append(f"{path} was not read: {exc.strerror or exc}")
        return True, []
    state = file_trust(path, data, env)
    if state == "trusted":
        return True, read_mcp_json(path, warnings, startup_timeout, data)
    servers = read_mcp_json(path, [], startup_timeout, data)
    warnings.append(untrusted_warning(path, servers, changed=state == "changed"))
    return False, servers


def untrusted_warning(path: Path, servers: Sequence[ServerDef] = (), changed: bool = False) -> str:
    """The warning for a ``.mcp.json`` whose servers were not started: its folder is not
    trusted, or (``changed``) the file changed or appeared since the folder was trusted."""
    named = "; ".join(f"{d.name} ({_shown(d.target)})" for d in servers) or "(none readable)"
    if changed:
        why = (
            f"is not the file you trusted: it changed (or appeared) since you trusted "
            f"{path.parent}, so none of its MCP servers was started: {named}. Review it; to "
            f"trust its current content, run `agentctl trust {path.parent}`"
        )
    else:
        why = (
            f"names MCP servers, but its folder is not trusted, so none of them was started: "
            f"{named}; if you trust this folder, run `agentctl trust {path.parent}`"
        )
    return f"{path} {why}"


def _shown(text: str) -> str:
    """A command line from an untrusted file, its control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def from_section(
    name: str,
    section: McpServerSection,
    source: str,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
) -> ServerDef:
    """The server of a config table (or a ``.mcp.json`` entry made one); ``startup_timeout``
    unless the table sets its own."""
    return ServerDef(
        name=name,
        source=source,
        command=section.command,
        args=tuple(section.args),
        env=tuple(sorted(section.env.items())),
        cwd=section.cwd,
        url=section.url,
        headers=tuple(sorted(section.headers.items())),
        startup_timeout=section.startup_timeout or startup_timeout,
        tool_timeout=section.tool_timeout,
        enabled_tools=tuple(section.enabled_tools) if section.enabled_tools is not None else None,
        disabled_tools=tuple(section.disabled_tools),
        trust_annotations=section.trust_annotations and source == "config",
        oauth_client_id=section.oauth_client_id,
        oauth_client_secret_env=section.oauth_client_secret_env,
        oauth_callback_port=section.oauth_callback_port,
    )


def from_param(
    param: McpServerParam, startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
) -> ServerDef:
    """A ``session/new`` entry, given ``startup_timeout`` seconds to start; ValueError when
    it names neither a command nor a URL, or has a name :func:`server_name_problem` refuses."""
    problem = server_name_problem(param.name)
    if problem is not None:
        raise ValueError(problem)
    if param.type == "sse":
        raise ValueError(f"MCP server {param.name!r}: SSE servers are not supported, use http")
    if param.type == "http" and not param.url:
        raise ValueError(f"MCP server {param.name!r}: an http server needs a url")
    if param.type != "http" and not param.command:
        raise ValueError(f"MCP server {param.name!r}: a stdio server needs a command")
    http = param.type == "http"
    return ServerDef(
        name=param.name,
        source="session",
        command=None if http else param.command,
        args=() if http else tuple(param.args),
        env=tuple(sorted((v.name, v.value) for v in param.env)),
        url=param.url if http else None,
        headers=tuple(sorted((h.name, h.value) for h in param.headers)),
        startup_timeout=startup_timeout,
    )


def find_mcp_json(cwd: Path, env: Mapping[str, str]) -> Path | None:
    """The nearest ``.mcp.json`` at or above ``cwd``, stopping at the repository root (a
    folder holding ``.git``) and below ``$HOME``; files others may write are skipped."""
    home = Path(os.path.realpath(env.get("HOME") or Path.home()))
    directory = Path(os.path.realpath(cwd))
    while directory != home and directory.parent != directory:
        candidate = directory / MCP_JSON
        if candidate.is_file() and unsafe_file_reason(candidate) is None:
            return candidate
        if (directory / ".git").exists():
            return None
        directory = directory.parent
    return None


def read_mcp_json(
    path: Path,
    warnings: list[str],
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    data: bytes | None = None,
) -> list[ServerDef]:
    """The servers of a ``.mcp.json`` (its bytes ``data``, else read now; ``startup_timeout``
    seconds to start each); a malformed file or entry becomes a warning."""
    import json  # only for a project with a .mcp.json

    try:
        text = (read_regular(path, MAX_MCP_JSON_BYTES) if data is None else data).decode()
        raw = json.loads(text)
        entries = raw.get("mcpServers") if isinstance(raw, dict) else None
        if not isinstance(entries, dict):
            raise ValueError('it has no "mcpServers" object')
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        warnings.append(f"{path} was not read: {exc}")
        return []
    found = []
    for name, entry in entries.items():
        try:
            found.append(_mcp_json_entry(str(name), entry, startup_timeout))
        except (msgspec.ValidationError, ValueError) as exc:
            warnings.append(f"{path}: MCP server {name!r} left out: {exc}")
    return found


class _JsonEntry(msgspec.Struct):
    type: str | None = None
    command: str | None = None
    args: list[str] = msgspec.field(default_factory=list)
    env: dict[str, str] = msgspec.field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)


def _mcp_json_entry(name: str, raw: Any, startup_timeout: float) -> ServerDef:
    problem = server_name_problem(name)
    if problem is not None:
        raise ValueError(problem)
    entry = msgspec.convert(raw, _JsonEntry)
    if entry.type in ("http", "streamable-http") or (entry.url and not entry.command):
        if not entry.url:
            raise ValueError("an http server needs a url")
        section = McpServerSection(url=entry.url, headers=entry.headers)
    elif entry.command:
        section = McpServerSection(command=entry.command, args=entry.args, env=entry.env)
    else:
        raise ValueError("it names neither a command nor a url")
    return from_section(name, section, "mcp.json", startup_timeout)


def qualified_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, other characters than letters, digits, ``_`` and ``-``
    replaced by ``_`` and cut to 64 characters (what every provider accepts)."""
    return _NOT_NAME.sub("_", f"mcp__{server}__{tool}")[:MAX_TOOL_NAME]
