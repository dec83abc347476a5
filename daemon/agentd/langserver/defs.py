"""Which language servers a session has, and which one serves a file.

The built-in definitions (:data:`BUILTINS`) are used only when their command is on ``PATH``;
a ``[language_servers.NAME]`` table changes the built-in of that name key by key (``enabled =
false`` switches it off) or adds a server. The tables come from the merged configuration, so
a project's ``.agentd.toml`` adds or changes servers only in a trusted folder
(:mod:`agentd.config.load`). Nothing here imports pygls or lsprotocol.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from agentd.config.schema import LanguageServerSection
from agentd.paths import which

DEFAULT_STARTUP_TIMEOUT = 30.0
LANGUAGE_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "javascript": (".js", ".jsx", ".mjs", ".cjs"),
    "go": (".go",),
    "rust": (".rs",),
    "c": (".c", ".h"),
    "cpp": (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"),
    "shellscript": (".sh", ".bash"),
}
"""LSP language ids and the file endings they stand for (``languages`` in a table)."""


class ServerDef(msgspec.Struct, frozen=True):
    """One language server definition; ``key`` is what makes its process (with the root)."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    extensions: tuple[str, ...] = ()
    root_markers: tuple[str, ...] = ()
    initialization_options: Any = None
    settings: Any = None
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.name, self.command, self.args, self.env)

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]

    def serves(self, path: Path) -> bool:
        return path.name.endswith(self.extensions)


def _builtin(
    name: str,
    command: str,
    args: tuple[str, ...],
    languages: tuple[str, ...],
    markers: tuple[str, ...],
) -> ServerDef:
    extensions = tuple(e for language in languages for e in LANGUAGE_EXTENSIONS[language])
    return ServerDef(name, command, args, extensions=extensions, root_markers=markers)


_PY_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json", ".git")
BUILTINS: tuple[ServerDef, ...] = (
    _builtin("basedpyright", "basedpyright-langserver", ("--stdio",), ("python",), _PY_MARKERS),
    _builtin("pyright", "pyright-langserver", ("--stdio",), ("python",), _PY_MARKERS),
    _builtin("pylsp", "pylsp", (), ("python",), _PY_MARKERS),
    _builtin(
        "typescript",
        "typescript-language-server",
        ("--stdio",),
        ("typescript", "javascript"),
        ("tsconfig.json", "jsconfig.json", "package.json", ".git"),
    ),
    _builtin("gopls", "gopls", (), ("go",), ("go.work", "go.mod", ".git")),
    _builtin("rust-analyzer", "rust-analyzer", (), ("rust",), ("Cargo.toml", ".git")),
    _builtin("clangd", "clangd", (), ("c", "cpp"), ("compile_commands.json", ".clangd", ".git")),
    _builtin("bash", "bash-language-server", ("start",), ("shellscript",), (".git",)),
)
"""The common servers, in order of preference: the first one on PATH for a file serves it."""


def definitions(
    configured: Mapping[str, LanguageServerSection],
    which: Callable[[str], str | None] = which,
) -> list[ServerDef]:
    """The servers a session gets: the configured tables first (in their order), then the
    built-ins the tables leave alone; a definition whose command is not found (``which``) is
    left out, a disabled one too."""
    builtins = {d.name: d for d in BUILTINS}
    found: list[ServerDef] = []
    for name, section in configured.items():
        if section.enabled:
            merged = _merged(name, section, builtins.get(name))
            if merged is not None:
                found.append(merged)
    found += [d for d in BUILTINS if d.name not in configured]
    return [d for d in found if _runnable(d.command, which)]


def _runnable(command: str, which: Callable[[str], str | None]) -> bool:
    if os.sep in command:
        return os.access(command, os.X_OK)
    return which(command) is not None


def _merged(name: str, section: LanguageServerSection, base: ServerDef | None) -> ServerDef | None:
    """``section`` over the built-in ``base`` (None: a new server; it needs a command and
    file endings, else it is left out)."""
    command = section.command or (base.command if base else None)
    extensions = _extensions(section) or (base.extensions if base else ())
    if command is None or not extensions:
        return None
    args = (
        section.args
        if section.args is not None
        else (base.args if base and not section.command else ())
    )
    markers = (
        section.root_markers
        if section.root_markers is not None
        else (base.root_markers if base else ())
    )
    return ServerDef(
        name,
        command,
        tuple(args),
        tuple(sorted(section.env.items())),
        extensions,
        tuple(markers),
        section.initialization_options,
        section.settings,
        section.startup_timeout or DEFAULT_STARTUP_TIMEOUT,
    )


def _extensions(section: LanguageServerSection) -> tuple[str, ...]:
    given = list(section.extensions or ())
    for language in section.languages or ():
        given += LANGUAGE_EXTENSIONS.get(language, ())
    return tuple(e if e.startswith(".") else f".{e}" for e in given)


def server_for(defs: list[ServerDef], path: Path) -> ServerDef | None:
    """The first definition that serves ``path`` (by its name's ending)."""
    return next((d for d in defs if d.serves(path)), None)


def root_for(definition: ServerDef, path: Path, cwd: Path) -> Path:
    """The project root of ``path`` for ``definition``: the nearest folder at or above the
    file, not above ``cwd``, holding one of its root markers; ``cwd`` otherwise (and for a
    file outside ``cwd``)."""
    if not path.is_relative_to(cwd):
        return cwd
    folder = path.parent
    while folder != cwd and folder.is_relative_to(cwd):
        if any((folder / marker).exists() for marker in definition.root_markers):
            return folder
        folder = folder.parent
    return cwd


def language_id(path: Path) -> str:
    """The LSP language id of a file (``plaintext`` when unknown)."""
    for language, extensions in LANGUAGE_EXTENSIONS.items():
        if path.name.endswith(extensions):
            return {
                "typescript": "typescriptreact" if path.suffix == ".tsx" else "typescript",
                "javascript": "javascriptreact" if path.suffix == ".jsx" else "javascript",
            }.get(language, language)
    return "plaintext"
