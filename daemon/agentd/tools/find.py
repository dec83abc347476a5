"""The ``find`` tool: paths matching a glob, with grep's ignore rules.

The pattern works like ripgrep's ``--glob``: without ``/`` it matches the name at any depth
(``*.py``), with ``/`` the path relative to the search root (``src/**/*.ts``); ``**`` crosses
directories. A file matching it is listed even when hidden or .gitignore'd, but directories
that are hidden, ignored, ``.git`` or ``node_modules`` are not entered. Results are sorted by
path (names sorted within each directory, depth first); directories end with ``/``.
The walk goes by directory descriptors and never follows a symlink
(:class:`agentd.tools.search.ignore.Walker`), so under the sandbox it stays in the workspace even
while folders are swapped for symlinks.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, ClassVar

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import FindDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.files.paths import display_path, locate, resolve_path
from agentd.tools.files.truncate import Limits, notice, truncate_head
from agentd.tools.search.ignore import Walker, parse_rule


class FindParams(msgspec.Struct, forbid_unknown_fields=True):
    pattern: Annotated[
        str, msgspec.Meta(description="Glob such as '*.py', '**/test_*.py' or 'src/**/*.ts'.")
    ]
    path: Annotated[
        str | None, msgspec.Meta(description="Directory to search (default: the cwd).")
    ] = None


class FindTool:
    name: ClassVar[str] = "find"
    description: ClassVar[str] = (
        "Find files and directories by glob: '*.py' matches names at any depth, 'src/*.ts' "
        "or '**/x/*.md' match paths relative to the search directory. Skips hidden and "
        ".gitignore'd directories, .git and node_modules. Returns at most "
        "{find_max_results} paths, sorted, relative to the search directory; directories "
        "end with '/'. It says when cut."
    )
    Params: ClassVar[type[FindParams]] = FindParams
    kind: ClassVar[ToolKind] = "search"
    mutating: ClassVar[bool] = False

    def locations(self, params: FindParams, ctx: ToolContext) -> list[Location]:
        return locate(params.path or ".", ctx)

    async def run(self, params: FindParams, ctx: ToolContext) -> ToolResult:
        root = resolve_path(params.path or ".", ctx)
        shown = display_path(root, ctx) if params.path else "."
        if not root.is_dir():
            raise ToolError(f"{shown} is not a directory; give a directory to search in.")
        if parse_rule(params.pattern) is None:
            raise ToolError("The pattern is empty; give a glob such as '*.py'.")
        limit = ctx.settings.find_max_results
        paths, cut = await asyncio.to_thread(find_paths, root, params.pattern, limit, ctx.workspace)
        details = FindDetails(path=str(root), count=len(paths), cut=cut)
        if not paths:
            return ToolResult(f"No paths match {params.pattern!r} in {shown}.", details)
        limits = Limits.from_settings(ctx.settings)
        output = truncate_head("\n".join(paths), limits)
        parts = [output.text]
        if cut:
            parts.append(f"[Results cut at {limit} paths. Use a more specific pattern or path.]")
        if output.truncated:
            parts.append(f"[{notice(output, kept='first', limits=limits)} Narrow the search.]")
        return ToolResult("\n".join(parts), details)


def find_paths(
    root: Path, pattern: str, limit: int, workspace: Path | None = None
) -> tuple[list[str], bool]:
    """Relative paths under ``root`` matching ``pattern`` (at most ``limit``) and whether
    more exist; walked by directory descriptors beneath ``workspace`` when set."""
    rule = parse_rule(pattern)
    assert rule is not None
    found: list[str] = []
    for entry in Walker(root, [pattern], workspace).walk(include_dirs=True):
        name = entry.rel.rsplit("/", 1)[-1]
        if not rule.matches(entry.rel, name, entry.is_dir):
            continue
        if len(found) == limit:
            return found, True
        found.append(entry.rel + "/" if entry.is_dir else entry.rel)
    return found, False
