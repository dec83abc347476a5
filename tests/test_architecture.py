"""The dependency rules of AGENTS.md, checked over the real import graph.

Every ``import``/``from … import`` of an ``agentd`` or ``agentctl`` module is read with
:mod:`ast` (module level, function level and ``TYPE_CHECKING`` blocks alike). Two checks:

* each unit (a top-level module or package of ``agentd``, or ``agentctl``) imports only the
  units :data:`ALLOWED` lists for it — the table is the architecture, kept short and explicit;
* no import cycle between modules, counting every import (``TYPE_CHECKING`` ones too);
* the front-ends (:data:`FRONT_ENDS`) never import each other, and the session layer imports
  none of them; the session API (``api``) imports neither them nor the session layer.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).parents[1]
SOURCES = {"agentd": ROOT / "daemon" / "agentd", "agentctl": ROOT / "clients" / "agentctl"}

BASE = {"protocol", "errors", "paths", "redact", "hosts"}
"""Leaf units anyone may import (wire types, error classes, XDG paths, secret redaction, the
loopback test)."""

ALLOWED: dict[str, set[str]] = {
    "protocol": set(),
    "errors": set(),
    "paths": set(),
    "redact": set(),
    "hosts": set(),
    "rpc": {"errors", "paths"},  # paths: the client-side socket checks
    "toolspec": set(),
    "hardening": set(),
    "tools": BASE | {"toolspec", "hardening"},
    "store": BASE,
    "mockllm": BASE
    | {"providers"},  # the in-process mock is a client of the providers' HTTP contract
    "config": BASE | {"tools"},  # settings, models, prices, credentials, project trust
    "permissions": BASE | {"tools"},
    "providers": BASE | {"toolspec", "config", "log"},  # never tools, never the mock LLM
    "agent": BASE | {"config", "providers", "tools", "toolspec"},
    "log": BASE | {"config", "rpc"},
    "api": BASE | {"rpc"},  # the typed session API (local or remote) and its event contract
    "mcp": BASE | {"config", "log", "rpc", "tools", "toolspec"},  # below session
    "langserver": BASE | {"config", "log", "tools"},  # the LSP client; below session
    "hooks": BASE | {"agent", "config", "log", "tools"},  # the user's commands; below session
    "telemetry": BASE | {"config", "log"},  # counters, OpenTelemetry (its SDK only when on)
    "session": BASE  # the one seam every front-end plugs into; it imports none of them
    | {
        "api",
        "agent",
        "config",
        "hardening",
        "hooks",
        "log",
        "langserver",
        "mcp",
        "mockllm",
        "permissions",
        "providers",
        "store",
        "telemetry",
        "tools",
        "toolspec",
    },
    "jsonrpc": BASE | {"api", "session", "rpc", "log", "hardening"},
    "web": BASE | {"api", "session", "log"},
    "daemon": BASE | {"session", "jsonrpc", "rpc", "log", "web", "telemetry"},  # the assembly
    "stdio": BASE,
    "housekeeping": BASE | {"tools", "log"},
    "transports": BASE | {"daemon", "stdio", "housekeeping", "web", "log", "tools"},  # peers
    "listen": BASE | {"daemon", "stdio", "transports", "hardening", "housekeeping", "log"},
    "frontend": BASE | {"api", "session"},  # where a front-end's sessions live; its options
    "inprocess": BASE | {"session", "log", "hardening", "housekeeping"},  # agentctl's one-shot
    "acp": BASE | {"api", "frontend", "rpc", "stdio", "log", "hardening", "housekeeping"},
    "mcp_server": BASE | {"api", "frontend", "rpc", "log", "hardening"},  # `agentd mcp`
    "lsp": BASE | {"api", "frontend", "rpc", "stdio", "log", "hardening", "housekeeping"},
    "schema": BASE | {"config", "api", "tools"},  # generators: api/methods.py, tools/catalog.json
    "cli": BASE
    | {
        "listen",
        "daemon",
        "acp",
        "frontend",
        "mcp_server",
        "lsp",
        "mockllm",
        "log",
        "schema",
        "web",
        "config",
    },
    "__main__": {"cli"},
    "agentctl": {"protocol", "errors", "rpc", "paths", "api", "inprocess"},
}
"""Units each unit may import (besides itself and the package root's ``__version__``)."""


def _module_name(package: str, path: Path) -> str:
    parts = [package, *path.relative_to(SOURCES[package]).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[0] if parts[0] == "agentctl" or len(parts) == 1 else parts[1]


def _modules() -> dict[str, Path]:
    return {
        _module_name(package, path): path
        for package, folder in SOURCES.items()
        for path in folder.rglob("*.py")
    }


def _imports() -> dict[str, set[tuple[str, bool]]]:
    """module -> {(imported module, type-only)} for every agentd/agentctl import."""
    modules = _modules()
    graph: dict[str, set[tuple[str, bool]]] = defaultdict(set)
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        type_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            for target in _targets(node, module, path, modules):
                if target.split(".")[0] in SOURCES:
                    graph[module].add((target, id(node) in type_only))
    return graph


def _targets(node: ast.AST, module: str, path: Path, modules: dict[str, Path]) -> list[str]:
    """The modules an import statement imports (``from pkg import mod`` names ``pkg.mod``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        package = module.split(".")
        keep = len(package) - node.level + (1 if path.name == "__init__.py" else 0)
        base = ".".join(package[:keep] + ([base] if base else []))
    return [
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
        for alias in node.names
    ]


def test_units_import_only_what_the_architecture_allows() -> None:
    broken = []
    for module, targets in sorted(_imports().items()):
        unit = _unit(module)
        for target, _ in sorted(targets):
            other = _unit(target)
            if other == unit or target == "agentd":  # itself, or the root's __version__
                continue
            if other not in ALLOWED.get(unit, set()):
                broken.append(f"{module} imports {target} ({unit} -> {other})")
    assert not broken, "\n".join(broken)


def test_every_unit_is_in_the_table() -> None:
    units = {_unit(module) for module in _imports()}
    assert units <= set(ALLOWED), sorted(units - set(ALLOWED))


FRONT_ENDS = {"jsonrpc", "web", "acp", "mcp_server", "lsp"}
"""The front-ends over the session layer: each maps one protocol onto it."""


def test_front_ends_never_import_each_other() -> None:
    for unit in FRONT_ENDS:
        assert not (ALLOWED[unit] & FRONT_ENDS), unit


def test_the_session_layer_imports_no_front_end() -> None:
    above = FRONT_ENDS | {"daemon", "transports", "listen", "cli", "__main__"}
    assert not (ALLOWED["session"] & above)
    assert not any(ALLOWED[unit] & above for unit in ALLOWED["session"] if unit in ALLOWED)


def test_the_api_imports_neither_a_front_end_nor_the_session_layer() -> None:
    """``api`` is the typed interface the front-ends and agentctl program against: below the
    session layer that implements it, so agentctl may use it without the session machinery."""
    above = FRONT_ENDS | {"session", "daemon", "transports", "listen", "cli", "__main__"}
    assert not (ALLOWED["api"] & above)
    assert "api" in ALLOWED["agentctl"]
    assert all("api" in ALLOWED[unit] for unit in FRONT_ENDS)


def test_no_import_cycles_between_modules() -> None:
    """No cycle of any kind: module-level, function-level and ``TYPE_CHECKING`` imports all
    count (a type-only cycle is still two modules that cannot be read apart)."""
    graph = {module: {t for t, _ in targets} for module, targets in _imports().items()}
    cycles = _cycles(graph)
    assert not cycles, "\n".join(" -> ".join(cycle) for cycle in cycles)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_front_ends_open_their_sessions_through_one_function() -> None:
    """``agentd acp``, ``lsp`` and ``mcp`` reach the in-process service and the shared daemon
    only through :mod:`agentd.frontend` (one options Struct, one function)."""
    backends = {"agentd.api.shared", "agentd.api.remote", "agentd.session.service"}
    direct = sorted(
        f"{module} imports {target}"
        for module, targets in _imports().items()
        if _unit(module) in {"acp", "lsp", "mcp_server"}
        for target, _ in targets
        if target in backends
    )
    assert not direct, "\n".join(direct)


AGENTCTL_LIBRARY = {"agentctl", "agentctl.client", "agentctl.events", "agentctl.launch"}
"""The async client library scripts import (``agentctl.prestart`` is its start-up helper)."""


def _agentctl_folder(module: str) -> str:
    """``agentctl.render.stream`` -> ``render``; a root module is its own name."""
    return module.split(".")[1] if module.count(".") >= 1 else ""


def test_agentctl_layers_point_one_way() -> None:
    """Inside agentctl: the library (client, events, launch, prestart) imports nothing of the
    command line; terminal output and run reporting (``render/``, ``run/``, ``approval/``)
    import no command, REPL, prompt input or shared command helper; the commands never import
    the REPL (``chat/`` builds on ``send``, not the other way)."""
    output = {"render", "run", "approval"}
    above_output = {"commands", "chat", "prompt", "common", "options", "parser", "cli"}
    broken = []
    for module, targets in sorted(_imports().items()):
        if not module.startswith("agentctl"):
            continue
        folder = _agentctl_folder(module)
        for target, _ in sorted(targets):
            if not target.startswith("agentctl."):
                continue
            other = _agentctl_folder(target)
            library = module in AGENTCTL_LIBRARY | {"agentctl.prestart"}
            if library and target not in AGENTCTL_LIBRARY | {"agentctl.prestart"}:
                broken.append(f"{module} (library) imports {target}")
            elif folder in output and other in above_output:
                broken.append(f"{module} ({folder}/) imports {target}")
            elif folder == "commands" and other == "chat":
                broken.append(f"{module} imports {target} (the REPL builds on the commands)")
    assert not broken, "\n".join(broken)
