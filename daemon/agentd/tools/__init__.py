"""The tools the model touches the world with (see README.md in this folder).

The registry is built from :mod:`agentd.tools.catalog` (no tool's module is imported until
the tool is used). :func:`tool_spec` turns a tool into what the LLM sees (its
Params JSON Schema made self-contained), :func:`build_tools` instantiates a tool set, and
:func:`run_tool` is the one way the loop runs a call: it validates the raw arguments,
runs the tool and turns every :class:`ToolError` (and OS error) into an error result.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import cache
from typing import Any

import msgspec

from agentd.protocol.tool_details import ToolErrorDetails
from agentd.tools.base import Tool, ToolContext, ToolError, ToolResult, Toolset
from agentd.tools.catalog import IMPLEMENTATIONS, CatalogEntry, LazyTool, implementation, registered
from agentd.tools.defaults import ToolSettings
from agentd.tools.settings import describe
from agentd.tools.skill import narrowed_out
from agentd.toolspec import ToolSpec

TOOLS: dict[str, type[Tool]] = {name: registered(name) for name in IMPLEMENTATIONS}
"""Every built-in tool by name: a :class:`~agentd.tools.catalog.LazyTool` class each, whose
implementation module is imported on first use (:mod:`agentd.tools.catalog`)."""
READ_ONLY: tuple[str, ...] = ("read", "grep", "find", "ls")
CONFIGURED_TOOLS: tuple[str, ...] = ("web_search", "skill", "lsp")
"""Tools a session gets only when it is configured for them (``web_search``: a backend in
``[web_search]``; ``skill``: skills installed; ``lsp``: a language server whose command is
found); never offered otherwise, also not when a client names them."""
DEFAULT_TOOLS: tuple[str, ...] = tuple(name for name in TOOLS if name not in CONFIGURED_TOOLS)
PROCESS_TOOLS: tuple[str, ...] = ("process_output", "process_kill", "process_list")
"""bash's companions: a tool set with bash gets them too (its background processes)."""

__all__ = [
    "CONFIGURED_TOOLS",
    "DEFAULT_TOOLS",
    "PROCESS_TOOLS",
    "READ_ONLY",
    "TOOLS",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "build_tools",
    "run_tool",
    "tool_spec",
]


def tool_spec(tool: Tool | type[Tool], settings: ToolSettings | None = None) -> ToolSpec:
    """Name, description and a self-contained JSON Schema (no ``$ref``/``$defs``) of a tool.

    The description states the limits of ``settings`` (the session's ``ctx.settings``; the
    defaults when None). Optional parameters appear as plain non-required properties (no
    ``null`` alternative).
    """
    entry = _catalog_entry(tool)
    if entry is None:
        server_side = getattr(tool, "server_search", None)
        schema = params_schema(params_struct(tool))
    else:  # from the catalog: only a provider-side search needs the implementation here
        real = implementation(entry.implementation) if entry.server_search else None
        server_side = getattr(real, "server_search", None)
        schema = entry.parameters
    server = server_side(settings) if server_side is not None and settings is not None else None
    return ToolSpec(tool.name, describe(tool, settings), schema, server)


def _catalog_entry(tool: Tool | type[Tool]) -> CatalogEntry | None:
    """The catalog's entry of a :class:`LazyTool` (class or instance), else None."""
    kind = tool if isinstance(tool, type) else type(tool)
    return kind.entry if issubclass(kind, LazyTool) else None


def params_struct(tool: Tool | type[Tool]) -> type[msgspec.Struct]:
    """The Struct a tool's arguments decode to (its ``Params``), for a tool or its class."""
    params = tool.Params
    if not (isinstance(params, type) and issubclass(params, msgspec.Struct)):
        raise TypeError(f"{tool.name}.Params is not a msgspec Struct")
    return params


def toolset(tools: dict[str, Tool], settings: ToolSettings | None = None) -> Toolset:
    """``tools`` with the specs the model is given for them (:func:`tool_spec` of each)."""
    return Toolset(tools, [tool_spec(tool, settings) for tool in tools.values()])


@cache
def params_schema(params: type[msgspec.Struct]) -> dict[str, Any]:
    """The JSON Schema of a Params Struct, ``$ref``s inlined, titles dropped.

    Built once per type and shared by every session's specs: read it, never change it.
    """
    raw = msgspec.json.schema(params)
    definitions = raw.get("$defs", {})
    schema = _inline(raw, definitions)
    schema.pop("description", None)
    return {"type": "object", **{k: v for k, v in schema.items() if k != "type"}}


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = definitions[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, definitions)
    out = {k: _inline(v, definitions) for k, v in node.items() if k not in ("$defs", "title")}
    return _drop_null_option(out)


def _drop_null_option(node: dict[str, Any]) -> dict[str, Any]:
    options = node.get("anyOf")
    if not isinstance(options, list) or {"type": "null"} not in options:
        return node
    rest = [option for option in options if option != {"type": "null"}]
    node = {k: v for k, v in node.items() if k != "anyOf"}
    if node.get("default", 0) is None:
        del node["default"]
    if len(rest) == 1:
        return {**node, **rest[0]}
    return {**node, "anyOf": rest}


def build_tools(names: Sequence[str] | None = None) -> dict[str, Tool]:
    """Instances of the named tools (all of :data:`DEFAULT_TOOLS` when None), in order.

    Raises ValueError naming the unknown names and the valid ones.
    """
    wanted = DEFAULT_TOOLS if names is None else _with_companions(tuple(names))
    unknown = [name for name in wanted if name not in TOOLS]
    if unknown:
        raise ValueError(f"Unknown tool(s): {', '.join(unknown)}. Valid tools: {', '.join(TOOLS)}.")
    return {name: TOOLS[name]() for name in wanted}


def _with_companions(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` with bash's process tools right after it when bash is named."""
    if "bash" not in names:
        return names
    missing = tuple(name for name in PROCESS_TOOLS if name not in names)
    at = names.index("bash") + 1
    return (*names[:at], *missing, *names[at:])


def signature(tool: Tool | type[Tool]) -> str:
    """A one-line reminder of a tool's parameters, e.g. ``read(path: string, offset?: integer)``."""
    schema = params_schema(params_struct(tool))
    required = set(schema.get("required", ()))
    parts = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or ("enum" if "enum" in prop else "value")
        if "enum" in prop:
            kind = " | ".join(repr(value) for value in prop["enum"])
        parts.append(f"{name}{'' if name in required else '?'}: {kind}")
    return f"{tool.name}({', '.join(parts)})"


async def run_tool(tool: Tool, raw_args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Validate ``raw_args`` against the tool's Params, run it, and return its result.

    Invalid arguments, :class:`ToolError` and ``OSError`` become results with
    ``is_error=True`` whose text is written for the model. Other exceptions (bugs) and
    cancellation propagate.
    """
    try:
        params = msgspec.convert(raw_args, params_struct(tool), strict=False)
    except msgspec.ValidationError as error:
        return ToolResult(
            f"Invalid arguments for {tool.name}: {error}. Expected {signature(tool)}.",
            ToolErrorDetails(error="invalid_arguments"),
            is_error=True,
        )
    refused = narrowed_out(tool.name, ctx.state)
    if refused is not None:  # a skill's allowed-tools narrow the run
        return ToolResult(refused, ToolErrorDetails(error="tool_error"), is_error=True)
    try:
        return await tool.run(params, ctx)
    except ToolError as error:
        return ToolResult(str(error), ToolErrorDetails(error="tool_error"), is_error=True)
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        return ToolResult(
            f"{error.strerror or error}{where}.", ToolErrorDetails(error="os_error"), is_error=True
        )


def close_workers() -> None:
    """End the threads the tools keep between calls (web_fetch's converter), so a process
    that closes its sessions can exit; a later call starts them again."""
    web_fetch = sys.modules.get("agentd.tools.web_fetch")
    if web_fetch is not None:  # never used: no threads to end
        web_fetch.close_converter()


def catalog_source() -> str:
    """A fresh :data:`~agentd.tools.catalog.CATALOG_FILE` from the tool classes (importing
    them all): ``agentd schema`` writes it, ``agentd schema --check`` compares."""
    entries = []
    for name, target in IMPLEMENTATIONS.items():
        tool = implementation(target)
        schema = params_schema(params_struct(tool))
        server = hasattr(tool, "server_search")
        made = CatalogEntry(
            name, target, tool.kind, tool.mutating, tool.description, schema, server
        )
        entries.append(made)
    import json  # agentd schema only: the catalog's stable, indented layout

    return json.dumps(msgspec.to_builtins(entries), indent=1, ensure_ascii=False) + "\n"
