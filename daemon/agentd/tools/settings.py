"""The ``[tools]`` configuration table, and the numbers the tool descriptions show the model.

:class:`ToolsTable` is the table: every key is optional (a missing key keeps the tool's
default) and documented once, beside its field; ``agentd schema`` renders those texts and the
built-in values into ``schemas/config.md``.

:func:`tool_settings` turns the table into a session's :class:`~agentd.tools.defaults.
ToolSettings` (``ctx.settings``: every value given); :func:`describe` fills the
placeholders of a tool's description (``{max_lines}``, ``{max_kb}``, ``{max_line_chars}``,
``{bash_timeout}``, ``{bash_max_timeout}``, ``{find_max_results}``, ``{ls_max_entries}``,
``{undo_max_per_file}``, grep's ``{grep_dialect}`` and task's ``{agent_profiles}``) with the
session's effective values, so the model reads the limits and the regex dialect that apply
to it, and the agent profiles it may start.

Its annotations are evaluated at import, as :mod:`agentd.config.schema` explains.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from agentd.tools.defaults import PDF_MAX_PAGES, ToolSettings
from agentd.tools.files.truncate import Limits
from agentd.tools.search import find_rg
from agentd.tools.skill import listing

if TYPE_CHECKING:
    from agentd.tools.base import Tool

Positive = Annotated[int, msgspec.Meta(ge=1)]
Seconds = Annotated[float, msgspec.Meta(gt=0)]
Bytes = Annotated[int, msgspec.Meta(ge=0)]


def _doc(text: str) -> msgspec.Meta:
    """A key's documentation (see :func:`agentd.config.schema.doc`)."""
    return msgspec.Meta(description=text)


class WebFetchTable(msgspec.Struct, forbid_unknown_fields=True):
    """The ``web_fetch`` tool: which non-public hosts it may reach."""

    allow_hosts: Annotated[
        list[str] | None,
        _doc(
            "hosts the SSRF guard lets through although they are loopback, private, "
            "link-local, CGNAT or metadata addresses: names or globs (`*.internal.example`), "
            "addresses (`127.0.0.1`) or CIDR blocks (`10.1.0.0/16`)"
        ),
    ] = None


class ToolsTable(msgspec.Struct, forbid_unknown_fields=True):
    """Limits and environment of the tools; a key left out keeps the built-in value."""

    max_output_lines: Annotated[
        Positive | None, _doc("lines per tool result (bash keeps the last ones)")
    ] = None
    max_output_bytes: Annotated[
        Annotated[int, msgspec.Meta(ge=1024)] | None, _doc("bytes per tool result")
    ] = None
    max_line_chars: Annotated[
        Annotated[int, msgspec.Meta(ge=80)] | None, _doc("read cuts longer lines")
    ] = None
    max_image_bytes: Annotated[Positive | None, _doc("read refuses larger images")] = None
    accept_images: Annotated[bool | None, _doc("false: read refuses images (text-only models)")] = (
        None
    )
    bash_timeout: Annotated[Seconds | None, _doc("seconds, when the model gives none")] = None
    bash_max_timeout: Annotated[
        Seconds | None, _doc("seconds, the cap on what the model asks for")
    ] = None
    bash_kill_grace: Annotated[
        Annotated[float, msgspec.Meta(ge=0)] | None, _doc("seconds between SIGTERM and SIGKILL")
    ] = None
    bash_spill_keep: Annotated[Positive | None, _doc("full-output files kept per session")] = None
    bash_spill_max_bytes: Annotated[Bytes | None, _doc("bytes kept per full-output file")] = None
    bash_max_background: Annotated[
        Positive | None, _doc("background processes (`bash` with `background`) per session")
    ] = None
    grep_backend: Annotated[
        Literal["auto", "rg", "python"] | None, _doc("`auto` uses rg when found")
    ] = None
    grep_timeout: Annotated[
        Seconds | None, _doc("seconds the Python grep backend may spend in one file")
    ] = None
    find_max_results: Annotated[Positive | None, _doc("paths per find result")] = None
    ls_max_entries: Annotated[Positive | None, _doc("entries per ls result")] = None
    undo_max_per_file: Annotated[Positive | None, _doc("undo_edit steps kept per file")] = None
    undo_max_bytes: Annotated[Bytes | None, _doc("undo history kept per session")] = None
    secret_env: Annotated[
        list[str] | None, _doc("more variables (names or globs) never passed to bash")
    ] = None
    pass_env: Annotated[
        list[str] | None,
        _doc("variables bash gets from the daemon's environment besides the safe set"),
    ] = None
    sandbox_network: Annotated[
        bool | None,
        _doc(
            'true: bash under `sandbox = "workspace"` shares the machine\'s network (default: '
            "its own network namespace with only a loopback of its own)"
        ),
    ] = None
    diagnostics_wait_ms: Annotated[
        Annotated[int, msgspec.Meta(ge=0, le=60_000)] | None,
        _doc(
            "milliseconds write, edit, undo_edit and an lsp rename wait for a language "
            "server's new diagnostics (0: do not wait)"
        ),
    ] = None
    web_fetch: WebFetchTable | None = None


_NUMERIC = frozenset(ToolsTable.__struct_fields__) - {
    "accept_images",
    "sandbox_network",
    "grep_backend",
    "secret_env",
    "pass_env",
    "web_fetch",
}


def tool_default(key: str) -> float | None:
    """The built-in value of a numeric ``[tools]`` limit (None: not a numeric limit)."""
    if key not in _NUMERIC:
        return None
    value = getattr(ToolSettings(), key)
    return float(value) if isinstance(value, int | float) else None


def tool_settings(section: ToolsTable | Mapping[str, Any] | None) -> ToolSettings:
    """A session's tool settings from a ``[tools]`` table: its values, the defaults elsewhere.

    A :class:`ToolsTable` (the validated configuration) is used as it is; a table as parsed
    (a mapping) is validated first: ValueError naming the bad key (unknown key, wrong type,
    out of range).
    """
    table = section if isinstance(section, ToolsTable) else _validated(section)
    given: dict[str, Any] = {
        name: list(value) if isinstance(value, list) else value
        for name, value in msgspec.structs.asdict(table).items()
        if value is not None and name != "web_fetch"
    }
    if table.web_fetch is not None and table.web_fetch.allow_hosts is not None:
        given["web_fetch_allow_hosts"] = list(table.web_fetch.allow_hosts)
    return ToolSettings(**given)


def _validated(section: Mapping[str, Any] | None) -> ToolsTable:
    try:
        return msgspec.convert(dict(section or {}), ToolsTable)
    except msgspec.ValidationError as error:
        raise ValueError(f"invalid [tools] section in the configuration: {error}") from None


def render_profiles(profiles: list[tuple[str, str]]) -> str:
    """The ``task`` tool's profile lines as its description shows them (``- name:
    description``; :attr:`ToolSettings.agent_profiles`)."""
    return "\n".join(f"- {name}: {description}" for name, description in profiles)


def describe(tool: "Tool | type[Tool]", settings: ToolSettings | None = None) -> str:
    """The tool's description with its limit placeholders filled from ``settings`` (the
    defaults when None)."""
    settings = settings or ToolSettings()
    limits = Limits.from_settings(settings)
    maximum = settings.bash_max_timeout
    default = min(settings.bash_timeout, maximum)
    values = {
        "max_lines": limits.max_lines,
        "max_kb": f"{limits.max_bytes / 1024:g}",
        "max_line_chars": limits.max_line_chars,
        "bash_timeout": f"{default:g}",
        "bash_max_timeout": f"{maximum:g}",
        "bash_max_background": str(settings.bash_max_background),
        "find_max_results": settings.find_max_results,
        "ls_max_entries": settings.ls_max_entries,
        "undo_max_per_file": settings.undo_max_per_file,
        "grep_dialect": _GrepDialect(settings.grep_backend),
        "agent_profiles": settings.agent_profiles,
        "pdf_max_pages": PDF_MAX_PAGES,
        "skills": listing(settings.skills),
    }
    return tool.description.format_map(values)


DIALECTS = {
    "rg": (
        "This session's engine is ripgrep (Rust regex): look-around (`(?=`, `(?<=`) and "
        "backreferences (`\\1`) are refused; `\\p{Greek}`, `[[:alpha:]]` and `\\x{3b1}` work."
    ),
    "python": (
        "This session's engine is Python's `re`: look-around and backreferences work; "
        "`\\p{...}`, `\\z`, `\\x{...}` and `(?<name>...)` are refused, and "
        "`[[:alpha:]]` is not a POSIX class (write `[a-zA-Z]`)."
    ),
}
"""What differs per backend, filled into grep's description (``{grep_dialect}``)."""


class _GrepDialect:
    """``{grep_dialect}``, looked up (``rg`` searched for on PATH) only by a description that
    has the placeholder: the grep tool's, not the other tools' built with every session."""

    def __init__(self, choice: str) -> None:
        self.choice = choice

    def __format__(self, spec: str) -> str:
        return format(DIALECTS[_grep_engine(self.choice)], spec)


def _grep_engine(choice: str) -> str:
    """``"rg"`` or ``"python"``: the backend grep will pick (rg when found, unless told)."""
    return "rg" if choice != "python" and find_rg() is not None else "python"
