"""``agentctl mcp list|add|remove|login|logout``: the MCP servers sessions get.

``list`` asks the daemon (``mcp/list``: the servers of the current folder with their state,
tools and source, then the other running ones); ``--check`` has the daemon connect to each
server anew and list its tools: a line ``✓ NAME …`` or ``✗ NAME …`` (with the error) each,
exit code 1 when one failed. ``login``/``logout``: :mod:`agentctl.commands.mcp_login`.
``add NAME -- COMMAND [ARG…]`` (or ``add NAME --url URL``) and ``remove NAME`` edit the
user configuration file (``$XDG_CONFIG_HOME/agentd/config.toml``) as text, keeping everything
else of it; the daemon reads it for every new session, so none needs restarting.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from agentctl.common import open_client, run_command
from agentctl.options import (
    McpAdd,
    McpAddOptions,
    McpList,
    McpLogin,
    McpLogout,
    McpOptions,
    McpRemove,
    mcp_add_options,
)
from agentctl.parser import mcp_add_parser
from agentctl.run import outcome
from agentd.protocol.controls import scrub
from agentd.protocol.mcp import server_name_problem
from agentd.protocol.trust_list import config_dir

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def mcp_main(options: McpOptions) -> int:
    """Dispatch ``mcp list``, ``add``, ``remove``, ``login`` and ``logout``."""
    if isinstance(options, McpList):
        listing = options
        return run_command(lambda: _list(listing))
    if isinstance(options, McpLogin | McpLogout):
        from agentctl.commands import mcp_login

        signing = options
        if isinstance(signing, McpLogin):
            return run_command(lambda: mcp_login.login(signing))
        return run_command(lambda: mcp_login.logout(signing))
    path = config_dir(os.environ) / "config.toml"
    try:
        if isinstance(options, McpAdd):
            added = _add_options(options.words)
            _add(path, added)
            sys.stdout.write(f"added MCP server {added.name} to {path}\n")
        elif isinstance(options, McpRemove):
            _remove(path, options.name)
            sys.stdout.write(f"removed MCP server {options.name} from {path}\n")
    except ValueError as exc:
        sys.stderr.write(f"agentctl: {exc}\n")
        return outcome.USAGE_ERROR
    return outcome.OK


async def _list(options: McpList) -> int:
    cwd = str(Path(options.cwd or ".").resolve())
    params = {"cwd": cwd, "check": True} if options.check else {"cwd": cwd}
    async with await open_client(options, cwd=cwd) as client:
        result = await client.call("mcp/list", params, timeout=None)
    servers: list[dict[str, Any]] = result["servers"]
    failed = any(s.get("check") and not s["check"]["ok"] for s in servers)
    code = outcome.AGENT_ERROR if failed else outcome.OK
    if options.json:
        sys.stdout.write(json.dumps(result) + "\n")
        return code
    if not servers:
        sys.stdout.write("no MCP servers (add one: agentctl mcp add NAME -- COMMAND…)\n")
    for server in servers:
        sys.stdout.write(_checked(server) if server.get("check") else _describe(server))
    return code


def _checked(server: dict[str, Any]) -> str:
    """A checked server: ``✓``/``✗``, its name, source and target, then its tools or why."""
    server = scrub(server)
    check = server["check"]
    head = f"{server['name']}  ({server['source']})  {server['target']}"
    if not check["ok"]:
        return f"✗ {head}\n  {check['error']}\n"
    count = len(check["tools"])
    line = f"✓ {head}  {count} tool{'' if count == 1 else 's'} in {check['seconds']:.1f} s\n"
    return line + (f"  tools: {', '.join(check['tools'])}\n" if check["tools"] else "")


def _describe(server: dict[str, Any]) -> str:
    server = scrub(server)  # names, command lines and errors come from servers and files
    line = f"{server['name']}  {server['state']}  ({server['source']})  {server['target']}\n"
    if server.get("cwd"):
        line += f"  cwd: {server['cwd']}\n"
    if server.get("tools"):
        line += f"  tools: {', '.join(server['tools'])}\n"
    if server.get("error"):
        line += f"  {server['error']}\n"
    return line


def _add_options(words: list[str]) -> McpAddOptions:
    """``NAME [--env N=V]… [--url URL] [-- COMMAND ARG…]`` (ValueError on a bad one)."""
    cut = words.index("--") if "--" in words else len(words)
    try:
        namespace = mcp_add_parser().parse_args(words[:cut])
    except SystemExit:
        raise ValueError(
            "usage: agentctl mcp add NAME [--env N=V]… (-- COMMAND… | --url URL)"
        ) from None
    return mcp_add_options(namespace, words[cut + 1 :])


def _add(path: Path, options: McpAddOptions) -> None:
    name = options.name
    if not _NAME.match(name):
        raise ValueError(f"bad server name {name!r}: use letters, digits, _ and -")
    problem = server_name_problem(name)
    if problem is not None:
        raise ValueError(problem)
    command = list(options.server_command)
    if bool(command) == bool(options.url):
        raise ValueError("give either -- COMMAND [ARG…] or --url URL")
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if name in _servers(text, path):
        raise ValueError(f"{path} already has an MCP server {name!r} (remove it first)")
    lines = [f"[mcp_servers.{name}]"]
    if command:
        lines += [f"command = {_toml(command[0])}", f"args = {_toml(command[1:])}"]
    else:
        lines.append(f"url = {_toml(options.url)}")
    if options.env:
        pairs = [item.split("=", 1) for item in options.env]
        if any(len(pair) != 2 for pair in pairs):
            raise ValueError("--env takes NAME=VALUE")
        lines.append("env = { " + ", ".join(f"{k} = {_toml(v)}" for k, v in pairs) + " }")
    block = "\n".join(lines) + "\n"
    separator = (
        "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    )
    _write(path, text + separator + block)


def _remove(path: Path, name: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if name not in _servers(text, path):
        raise ValueError(f"{path} has no MCP server {name!r}")
    kept: list[str] = []
    skipping = False
    header = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
    for line in text.splitlines(keepends=True):
        found = header.match(line)
        if found:
            table = found[1].replace('"', "").replace("'", "")
            skipping = table == f"mcp_servers.{name}" or table.startswith(f"mcp_servers.{name}.")
        if not skipping:
            kept.append(line)
    new_text = "".join(kept)
    if name in _servers(new_text, path):
        raise ValueError(f"cannot remove {name!r} from {path}: edit the file by hand")
    _write(path, new_text)


def _servers(text: str, path: Path) -> dict[str, Any]:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path} is not valid TOML: {exc}") from None
    servers = data.get("mcp_servers", {})
    return servers if isinstance(servers, dict) else {}


def _toml(value: Any) -> str:
    """A TOML string or array of strings (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=False)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.chmod(0o600)
    temporary.replace(path)
