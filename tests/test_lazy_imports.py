"""Function-level imports only at the documented lazy boundaries.

Every ``import`` inside a function of ``agentd`` or ``agentctl`` (found with ``ast``) must
be listed in :data:`LAZY_BOUNDARIES`: the importing module, why it imports late, and the
modules it may import so. Anything else belongs at the top of its module. An entry that no
longer matches an import fails too, so the table shrinks with the code. The reasons are the
kinds ``daemon/agentd/README.md`` ("Lazy imports") describes; the start-up import budgets
themselves are checked by ``tests/rpc/test_imports.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
ROOTS = {"agentd": REPO / "daemon" / "agentd", "agentctl": REPO / "clients" / "agentctl"}

STARTUP = (
    "on the start-up path of `agentd --stdio` or `agentctl` (tests/rpc/test_imports.py): "
    "what only one command or branch needs is imported there"
)
DISPATCH = "a command-line dispatcher imports only the command (front-end) it runs"
FIRST_USE = (
    "a part of the daemon built on first use (providers and their HTTP client, the store, "
    "MCP, the mock LLM): a daemon or session that never needs it never imports it"
)
HEAVY = "a heavy library, or a costly stdlib module, imported where its one use is"
SANDBOX = "sandboxing (Landlock, mount namespaces, ctypes) loaded only when a command is confined"
MCP = "MCP (agentd.mcp, the SDK) only for a session with MCP servers"
LSP = (
    "the LSP client (agentd.langserver, pygls, lsprotocol) only when a session first needs a "
    "language server"
)
TELEMETRY = (
    "OpenTelemetry (agentd.telemetry.otel, the SDK and its exporters) only when telemetry is "
    "configured"
)
SIDE = "imported for its side effect or platform-specific (ctypes, termios, readline)"
FRONT_END_BACKEND = (
    "a front-end's backend: the in-process session service or the remote client, whichever "
    "the command chose, never both"
)
PENDING = (
    "imports already loaded with the module, kept in place while concurrent changes to this "
    "module land: to be moved to the top"
)


class LazyImport(NamedTuple):
    module: str
    line: int
    target: str


LAZY_BOUNDARIES: dict[str, tuple[str, tuple[str, ...]]] = {
    # command-line dispatchers and front-end entry points
    "agentd.cli": (DISPATCH, (
        "agentd.acp", "agentd.daemon", "agentd.frontend", "agentd.listen", "agentd.lsp",
        "agentd.mcp_server.main",
        "agentd.mockllm.server", "agentd.schema", "logging",
    )),
    "agentctl.cli": (DISPATCH, ("agentctl", "agentd")),
    "agentctl.batch.cli": (HEAVY, ("agentctl.batch.ray_engine",)),  # Ray: only --engine ray
    "agentd.acp.main": (STARTUP, (
        "agentd.hardening", "agentd.housekeeping", "agentd.log", "agentd.stdio",
    )),
    "agentd.mcp_server.main": (STARTUP, ("agentd.hardening", "agentd.log")),
    "agentd.mcp_server.streamable": (STARTUP, ("uvicorn",)),  # only with --http
    "agentd.lsp.main": (STARTUP, (
        "agentd.hardening", "agentd.housekeeping", "agentd.log", "agentd.lsp.server",
        "agentd.paths", "agentd.stdio", "logging", "pygls", "threading",
    )),
    "agentd.frontend": (FRONT_END_BACKEND, ("agentd.api.shared", "agentd.session.service")),
    "agentd.api.shared": (FRONT_END_BACKEND, ("agentd.api.remote",)),
    # the start-up paths of `agentd --stdio` and `agentctl`
    "agentd.listen": (STARTUP, ("agentd.hardening",)),
    "agentd.jsonrpc.lifecycle": (STARTUP, ("agentd.hardening",)),
    "agentd.housekeeping": (STARTUP, ("agentd.tools.process.orphans",)),
    "agentd.daemon": (STARTUP, ("agentd.web.remote", "agentd.web.server")),
    "agentd.transports": (STARTUP, ("agentd.tools.process.peers", "agentd.web.server")),
    "agentd.log": (STARTUP, (
        "agentd.config.credentials", "agentd.redact", "json", "queue", "structlog",
    )),
    "agentd.paths": (STARTUP, ("secrets", "socket", "struct")),
    "agentd.protocol.control_pins": (STARTUP, ("hashlib",)),
    "agentd.protocol.trust_list": (HEAVY, ("tempfile",)),
    "agentd.config.load": (STARTUP, ("tomllib",)),
    "agentd.schema": (STARTUP, ("agentd.config.schema",)),
    "agentctl.client": (STARTUP, ("agentd.paths", "agentd.rpc")),
    "agentctl.local": (FRONT_END_BACKEND, ("agentd.inprocess",)),
    "agentctl.commands.send": (FRONT_END_BACKEND, ("agentctl.local",)),
    "agentctl.launch": (STARTUP, ("agentd.paths",)),
    "agentctl.prestart": (STARTUP, ("agentctl.launch", "asyncio", "signal")),
    "agentctl.chat.repl": (STARTUP, ("readline",)),
    "agentctl.chat.history": (STARTUP, ("agentd.paths", "readline")),
    "agentctl.chat.completion": (SIDE, ("readline",)),
    "agentctl.commands.mcp": (STARTUP, ("tomllib", "agentctl.commands.mcp_login")),
    "agentctl.commands.mcp_login": (STARTUP, ("agentctl.commands.web",)),
    "agentctl.commands.trust": (f"{STARTUP}; {SIDE}", ("termios", "tty")),
    "agentctl.commands.trust_show": (f"{STARTUP} (tomllib, json: a trust review)", (
        "json", "tomllib",
    )),
    "agentctl.commands.web": (STARTUP, ("webbrowser",)),
    "agentctl.approval.ask": (SIDE, ("termios", "tty")),
    "agentctl.approval.questions": (f"{SIDE}: a question asked on a terminal", ("termios", "tty")),
    "agentctl.prompt.provider_file": (SIDE, ("ctypes",)),
    "agentd.hardening": (SIDE, ("ctypes",)),
    # parts of the daemon built on first use
    "agentd.session.shared": (FIRST_USE, (
        "agentd.config", "agentd.langserver", "agentd.mcp", "agentd.mockllm.transport",
        "agentd.paths",
        "agentd.providers.transport", "agentd.store", "agentd.tools.process.spill",
    )),
    "agentd.session.service": (f"{FIRST_USE} (session commands: when one runs); {PENDING}", (
        "agentd.agent.run", "agentd.session.commands", "agentd.session.factory",
        "agentd.session.manager", "agentd.session.shared", "agentd.session.skill_methods",
    )),
    "agentd.session.stored": (f"{FIRST_USE} (the store, rewind: when a method needs them)", (
        "agentd.session.rewind", "agentd.session.shared",
        "agentd.store", "agentd.tools.process.spill",
    )),
    "agentd.session.changes": (
        f"{FIRST_USE} (inotify, through ctypes: at a session's first bash command)",
        ("agentd.session.inotify",),
    ),
    "agentd.session.binding": (f"{FIRST_USE} (a provider: when a session binds its model)", (
        "agentd.providers", "agentd.providers.retry",
    )),
    "agentd.session.parts": (f"{FIRST_USE} (hooks: only a session with hooks); {SANDBOX}", (
        "agentd.agent.prompt", "agentd.hooks.session", "agentd.tools.process.landlock",
        "agentd.tools.process.mountns",
    )),
    "agentd.providers": (FIRST_USE, ("agentd.providers",)),
    "agentd.providers.transport": (
        f"{FIRST_USE} (httpx: at the first https request)", ("agentd.providers.httpx_client",),
    ),
    "agentd.providers.stream": (
        f"{FIRST_USE} (httpx: only to wrap a caller's httpx.AsyncClient)",
        ("agentd.providers.httpx_client",),
    ),
    "agentd.providers.errors": (
        f"{HEAVY} (email for a Retry-After HTTP date, http for an error with no body)",
        ("email.utils", "http"),
    ),
    "agentd.session.preview": (f"{FIRST_USE} (a tool's module: when a call of it is previewed)", (
        "agentd.tools.edit", "agentd.tools.notebook_edit",
    )),
    "agentd.session.commands": (
        f"{FIRST_USE} (a command's own model)", ("agentd.session.binding",),
    ),
    "agentd.permissions.rules": (
        f"{FIRST_USE} (the gitignore-style parser: at the first path rule)",
        ("agentd.tools.search.ignore",),
    ),
    "agentd.session.approval": (
        f"{FIRST_USE} (a call's preview: when the user is asked)", ("agentd.session.preview",),
    ),
    "agentd.store.file": (f"{FIRST_USE} (a branch copied: when a session is forked)", (
        "agentd.store.fork",
    )),
    "agentd.tools.bash": (f"{FIRST_USE} (a background command: when one starts)", (
        "agentd.tools.bash_background",
    )),
    "agentctl.commands.session_choice": (
        f"{STARTUP} (the trust question: an untrusted project file on a terminal)",
        ("agentctl.commands.trust",),
    ),
    "agentd.session.mcp_setup": (MCP, ("agentd.mcp",)),
    "agentd.telemetry": (f"{FIRST_USE} (decided at the first session); {TELEMETRY}", (
        "agentd.config.load", "agentd.telemetry.otel", "agentd.telemetry.settings",
    )),
    "agentd.session.langservers": (
        LSP,
        ("agentd.langserver.defs", "agentd.langserver.reads", "agentd.langserver.session"),
    ),
    "agentd.session.subagent_tools": (MCP, ("agentd.mcp",)),
    "agentd.mcp.http": (MCP, ("mcp", "agentd.mcp.oauth", "httpx2")),
    "agentd.mcp.credentials": (MCP, ("mcp",)),
    "agentd.mcp.servers": (f"{MCP} (json: a project's .mcp.json)", ("json",)),
    "agentd.mcp.login": (MCP, ("mcp", "agentd.mcp.http")),
    "agentd.mcp.control": (MCP, ("agentd.mcp.login",)),
    # heavy or costly libraries where their one use is
    "agentctl.render.mdterm": (HEAVY, ("rich",)),
    "agentd.store.markdown_html": (HEAVY, ("markdown_it",)),
    "agentd.tools.net.convert": (HEAVY, ("html_to_markdown",)),
    "agentd.tools.net.fetch": (HEAVY, ("httpx",)),
    "agentd.tools.web_fetch": (HEAVY, ("agentd.tools.net",)),
    "agentd.tools.shellparse.grammar": (HEAVY, ("tree_sitter", "tree_sitter_bash", "importlib")),
    "agentd.tools.shellparse.danger": (HEAVY, ("agentd.tools.shellparse.grammar",)),
    "agentd.tools.files.diffs": (HEAVY, ("difflib",)),
    "agentd.tools.files.edit_match": (HEAVY, ("difflib",)),
    "agentd.tools.read": (HEAVY, ("agentd.tools.documents", "difflib")),
    "agentd.tools.notebook_edit": (HEAVY, ("agentd.tools.documents", "agentd.tools.files.diffs")),
    "agentd.tools.documents.reader": (HEAVY, ("agentd.tools.documents.pdf",)),
    "agentd.tools.web_search": (HEAVY, ("agentd.tools.websearch",)),
    "agentd.tools.documents.pdfwork": (HEAVY, ("pypdfium2",)),
    "agentd.tools.process.spill": (HEAVY, ("shutil", "tempfile")),
    "agentd.tools.process.gitdirs": (f"{HEAVY} (shutil: a control file turned into a folder)", (
        "shutil",
    )),
    "agentd.config.schema": (f"{HEAVY} (difflib: a config error's suggestion)", ("difflib",)),
    "agentd.store.contents": (f"{HEAVY} (shutil: a session deleted; hashlib: a digest)", (
        "hashlib", "shutil",
    )),
    "agentd.store.blobs": (f"{HEAVY} (shutil: a session deleted)", ("shutil",)),
    "agentd.config.project_rules": (f"{HEAVY} (json: a rule written)", ("json",)),
    "agentd.tools": (f"{HEAVY} (json: the catalog written by agentd schema)", ("json",)),
    "agentctl.approval.preview": (f"{HEAVY} (json: an MCP call's preview)", ("json",)),
    "agentd.web.remote": (HEAVY, ("ssl",)),
    # sandboxing, only for a confined command
    "agentd.tools.bash_setup": (SANDBOX, (
        "agentd.tools.process.gitdirs", "agentd.tools.process.landlock",
        "agentd.tools.process.mountns", "agentd.tools.process.seccomp",
    )),
    "agentd.tools.process.mountns": (SANDBOX, ("agentd.paths", "agentd.tools.process.gitdirs")),
    "agentd.tools.process.host_pool": (SANDBOX, ("agentd.tools.process.seccomp",)),
    "agentd.tools.process.shell": (SANDBOX, (
        "agentd.tools.process.host_pool", "agentd.tools.process.landlock",
        "agentd.tools.process.seccomp",
    )),
    "agentd.tools.search.child": (SANDBOX, ("agentd.tools.process.landlock",)),
    "agentd.tools.search.rg": (SANDBOX, ("agentd.tools.process.landlock", "tempfile")),
}  # fmt: skip
"""Module: (why it imports inside functions, the modules it may import so)."""


def module_name(path: Path) -> str:
    for package, root in ROOTS.items():
        if path.is_relative_to(root):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise AssertionError(path)


def is_module(name: str) -> bool:
    """Whether ``name`` is a module of agentd or agentctl (rather than a name in one)."""
    package, _, rest = name.partition(".")
    root = ROOTS.get(package)
    if root is None:
        return False
    base = root.joinpath(*rest.split(".")) if rest else root
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def targets(node: ast.Import | ast.ImportFrom, module: str, package: bool) -> list[str]:
    """The modules an import statement imports (a submodule named in ``from X import y``
    counts as ``X.y``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if package else module.split(".")[:-1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join([*parts, *([base] if base else [])])
    found = [f"{base}.{a.name}" if is_module(f"{base}.{a.name}") else base for a in node.names]
    return list(dict.fromkeys(found))


def function_imports() -> Iterator[LazyImport]:
    """Every import statement inside a function (at any depth) of agentd and agentctl."""
    for root in ROOTS.values():
        for path in sorted(root.rglob("*.py")):
            module = module_name(path)
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for func in ast.walk(tree):
                if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(func):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        for target in targets(node, module, path.name == "__init__.py"):
                            yield LazyImport(module, node.lineno, target)


def _allowed(target: str, allowed: tuple[str, ...]) -> bool:
    return any(target == name or target.startswith(f"{name}.") for name in allowed)


def test_function_level_imports_are_documented_lazy_boundaries() -> None:
    found = sorted(set(function_imports()))
    stray = [
        f"{imp.module}:{imp.line} imports {imp.target}"
        for imp in found
        if not _allowed(imp.target, LAZY_BOUNDARIES.get(imp.module, ("", ()))[1])
    ]
    assert not stray, (
        "function-level imports outside the documented lazy boundaries (move them to the "
        "top of the module, or add the module to LAZY_BOUNDARIES with its reason):\n"
        + "\n".join(stray)
    )


def test_every_lazy_boundary_is_still_used() -> None:
    found = set(function_imports())
    unused = [
        f"{module}: {name}"
        for module, (_reason, allowed) in LAZY_BOUNDARIES.items()
        for name in allowed
        if not any(imp.module == module and _allowed(imp.target, (name,)) for imp in found)
    ]
    assert not unused, "LAZY_BOUNDARIES entries no import uses any more:\n" + "\n".join(unused)


_TELEMETRY_RUN = """
import asyncio, os, sys
for name, folder in [("XDG_CONFIG_HOME", "c"), ("XDG_DATA_HOME", "d"), ("XDG_STATE_HOME", "s"),
                     ("XDG_CACHE_HOME", "k"), ("XDG_RUNTIME_DIR", "r")]:
    os.makedirs(ROOT + "/" + folder, mode=0o700, exist_ok=True)
    os.environ[name] = ROOT + "/" + folder
from agentd.protocol.methods import PromptParams, SessionNewParams
from agentd.session.service import SessionService

async def main():
    service = SessionService()
    info = await service.create(SessionNewParams(cwd=ROOT, provider="mock"))
    trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"  # ignored while off
    await service.prompt(PromptParams(session_id=info.session_id, text="hi", traceparent=trace))
    await service.close()

asyncio.run(main())
print("OTEL:", *sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"
                       or m == "agentd.telemetry.otel"))
"""


def otel_modules_after_a_run(root: Path, env: dict[str, str]) -> list[str]:
    """The OpenTelemetry modules a process loaded for one session and one run on the mock."""
    import os
    import subprocess
    import sys

    from tests.harness import scaled

    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    result = subprocess.run(
        [sys.executable, "-c", f"ROOT = {str(root)!r}\n" + _TELEMETRY_RUN],
        capture_output=True,
        text=True,
        check=True,
        timeout=scaled(120),
        env=clean | env,
    )
    return result.stdout.splitlines()[-1].split()[1:]


def test_telemetry_off_imports_nothing_of_opentelemetry(tmp_path: Path) -> None:
    """With no endpoint configured, a session and a run import no OpenTelemetry module (the
    API included) and not ``agentd.telemetry.otel``."""
    assert otel_modules_after_a_run(tmp_path, {}) == []


def test_telemetry_on_imports_the_sdk(tmp_path: Path) -> None:
    """With ``OTEL_EXPORTER_OTLP_ENDPOINT`` set the SDK and the OTLP/HTTP exporters load (the
    endpoint is a closed loopback port: the last export fails quietly at shutdown)."""
    loaded = otel_modules_after_a_run(
        tmp_path, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    )
    assert "agentd.telemetry.otel" in loaded
    assert "opentelemetry.sdk.trace" in loaded
    assert "opentelemetry.exporter.otlp.proto.http.trace_exporter" in loaded
