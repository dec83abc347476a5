r"""The ``grep`` tool: regex search over files, with ripgrep or a pure-Python fallback.

``ctx.settings.grep_backend``: ``"auto"`` (default: rg when on PATH), ``"rg"`` or
``"python"``. Both backends skip the same files (see :mod:`agentd.tools.search.ignore`) and give the
same output for the same tree: ``path:line:text`` for matches, ``path-line-text`` for context
lines and ``--`` between non-adjacent groups (content), one path per line (files), or
``path:count`` (count); paths relative to the search root, in walk order.

The regex dialect is the backend's: Rust's ``regex`` (rg) or Python's ``re``. The tool
description lists the syntax both share and, through ``settings.DIALECTS``, what differs in the
backend the session will use: rg refuses look-around and backreferences; ``re`` refuses
``\p{...}``, ``\z``, ``\x{...}`` and ``(?<name>...)``, and reads ``[[:alpha:]]`` as a plain
set and ``a{`` as literal text where rg refuses them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import msgspec

from agentd.protocol.events import Location, ToolKind
from agentd.protocol.tool_details import GrepDetails
from agentd.tools.base import ToolContext, ToolError, ToolResult
from agentd.tools.files.paths import display_path, locate, resolve_path
from agentd.tools.files.truncate import (
    GREP_MAX_LINE_CHARS,
    GREP_MAX_RESULTS,
    Limits,
    cut_line,
    notice,
    truncate_head,
)
from agentd.tools.search import find_rg
from agentd.tools.search.core import (
    Hit,
    SearchRequest,
    SearchResult,
    compile_pattern,
)
from agentd.tools.search.proc import search_python
from agentd.tools.search.rg import confinable, search_rg


class GrepParams(msgspec.Struct, forbid_unknown_fields=True):
    pattern: Annotated[
        str, msgspec.Meta(description="Regular expression (syntax: see the tool description).")
    ]
    path: Annotated[
        str | None, msgspec.Meta(description="File or directory to search (default: the cwd).")
    ] = None
    glob: Annotated[
        str | None,
        msgspec.Meta(
            description="Only search files matching this glob, e.g. '*.py' or 'src/**/*.ts'."
        ),
    ] = None
    ignore_case: Annotated[bool, msgspec.Meta(description="Case-insensitive search.")] = False
    context: Annotated[
        int, msgspec.Meta(ge=0, le=20, description="Lines of context around each match.")
    ] = 0
    output_mode: Annotated[
        Literal["content", "files", "count"],
        msgspec.Meta(
            description="content: matching lines; files: paths of files with matches; "
            "count: matching lines per file."
        ),
    ] = "content"
    max_results: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        msgspec.Meta(description="Maximum matches (or files) to return (default 100)."),
    ] = None


class GrepTool:
    name: ClassVar[str] = "grep"
    description: ClassVar[str] = (
        "Search file contents with a regular expression. Searches the cwd or `path`, "
        "skipping hidden files, .gitignore'd paths, .git and node_modules. output_mode: "
        "content (`path:line:text`, default), files (paths only) or count (`path:count`). "
        "Returns at most 100 matches by default (max_results) and cuts lines at 500 "
        "characters; it says when results were cut. Use `glob` to filter files. Patterns "
        "match within one line. Syntax that works everywhere: literal text, `.`, classes "
        "`[a-z]` `[^...]`, `\\d \\w \\s \\b` and their upper-case negations, `^` `$` (line "
        "anchors), groups `(...)` `(?:...)` `(?P<name>...)`, `|`, quantifiers `* + ? {{n}} "
        "{{n,m}}` and their lazy forms (`*?`), inline flags `(?i)` `(?s)`; escape "
        "metacharacters to match them literally (`\\(`, `\\.`, `\\{{`). {grep_dialect}"
    )
    Params: ClassVar[type[GrepParams]] = GrepParams
    kind: ClassVar[ToolKind] = "search"
    mutating: ClassVar[bool] = False

    def locations(self, params: GrepParams, ctx: ToolContext) -> list[Location]:
        return locate(params.path or ".", ctx)

    async def run(self, params: GrepParams, ctx: ToolContext) -> ToolResult:
        if "\0" in params.pattern or "\0" in (params.glob or ""):
            raise ToolError("The pattern or glob contains a NUL character; remove it.")
        root = resolve_path(params.path or ".", ctx)
        shown = display_path(root, ctx) if params.path else "."
        if not root.exists():
            raise ToolError(f"{params.path} does not exist.")
        request = SearchRequest(
            pattern=params.pattern,
            root=root,
            glob=params.glob,
            ignore_case=params.ignore_case,
            context=params.context,
            mode=params.output_mode,
            max_results=params.max_results or GREP_MAX_RESULTS,
            workspace=ctx.workspace,
            time_limit=ctx.settings.grep_timeout,
        )
        backend = await _backend(ctx.settings.grep_backend, sandboxed=ctx.workspace is not None)
        if backend == "python":
            compile_pattern(request.pattern, request.ignore_case)
            result = await search_python(request)
        else:
            result = await search_rg(backend, request)
        result = _without_denied(result, root, ctx)
        return _format(result, request, shown, Limits.from_settings(ctx.settings), backend)


def _without_denied(result: SearchResult, root: Path, ctx: ToolContext) -> SearchResult:
    """``result`` without the files a ``read(…)`` deny rule of the session's
    ``permission_policy`` covers."""
    policy = ctx.settings.permission_policy
    if policy is None:
        return result
    denied = policy.read_denied
    cache: dict[str, bool] = {}

    def hidden(path: str) -> bool:
        if path not in cache:
            cache[path] = bool(denied(root / path if root.is_dir() else root))
        return cache[path]

    hits = [hit for hit in result.hits if not hidden(hit.path)]
    files = [(path, count) for path, count in result.files if not hidden(path)]
    return SearchResult(hits=hits, files=files, cut=result.cut)


async def _backend(choice: str, sandboxed: bool) -> str:
    """``"python"`` or the path of rg, following the ``grep_backend`` setting ``choice``. A
    sandboxed session uses rg only where it can be confined to the workspace (Landlock)."""
    if choice not in ("auto", "rg", "python"):
        raise ToolError(f"grep_backend must be auto, rg or python, not {choice!r}.")
    rg = find_rg() if choice != "python" else None
    if rg is not None and sandboxed and not await asyncio.to_thread(confinable, rg):
        return "python"
    return rg or "python"


def format_lines(result: SearchResult, request: SearchRequest) -> list[str]:
    """The output lines of a result (identical for both backends)."""
    if request.mode == "files":
        return [path for path, _ in result.files]
    if request.mode == "count":
        return [f"{path}:{count}" for path, count in result.files]
    lines: list[str] = []
    previous: Hit | None = None
    for hit in result.hits:
        adjacent = previous and previous.path == hit.path and hit.line == previous.line + 1
        if request.context and previous is not None and not adjacent:
            lines.append("--")
        mark = ":" if hit.is_match else "-"
        text = cut_line(hit.text.rstrip("\r"), GREP_MAX_LINE_CHARS)
        lines.append(f"{hit.path}{mark}{hit.line}{mark}{text}")
        previous = hit
    return lines


def _format(
    result: SearchResult, request: SearchRequest, shown: str, limits: Limits, backend: str
) -> ToolResult:
    lines = format_lines(result, request)
    matches = sum(hit.is_match for hit in result.hits)
    details = GrepDetails(
        path=str(request.root),
        backend=_name(backend),
        matches=matches,
        files=len(result.files),
        cut=result.cut,
    )
    if not lines:
        return ToolResult(f"No matches for {request.pattern!r} in {shown}.", details)
    output = truncate_head("\n".join(lines), limits)
    parts = [output.text]
    if result.cut:
        unit = "matches" if request.mode == "content" else "files"
        parts.append(
            f"[Results cut at {request.max_results} {unit}. Narrow the search (a more specific "
            "pattern, a path or a glob) or raise max_results.]"
        )
    if output.truncated:
        parts.append(f"[{notice(output, kept='first', limits=limits)} Narrow the search.]")
    details.truncated = output.truncated
    return ToolResult("\n".join(parts), details)


def _name(backend: str) -> Literal["rg", "python"]:
    return "python" if backend == "python" else "rg"
