"""The ``[tools]`` configuration table, and the numbers the tool descriptions show the model.

Every key is optional; a missing key keeps the tool's default::

    [tools]
    max_output_lines = 2000      # per result, every tool (bash keeps the last ones)
    max_output_bytes = 51200     # per result, every tool
    max_line_chars = 2000        # read cuts longer lines
    max_image_bytes = 5242880    # read returns larger images as an error
    accept_images = true         # false: read refuses images (text-only models)
    bash_timeout = 120           # seconds, when the model gives none
    bash_max_timeout = 600       # seconds, the cap on what the model asks for
    bash_kill_grace = 2          # seconds between SIGTERM and SIGKILL
    bash_spill_keep = 20         # full-output files kept per session
    bash_spill_max_bytes = 67108864  # bytes kept per full-output file (64 MiB)
    grep_backend = "auto"        # auto (rg when found) | rg | python
    grep_timeout = 10            # seconds the Python backend may spend in one file
    find_max_results = 1000
    ls_max_entries = 500
    undo_max_per_file = 20       # undo_edit steps per file
    undo_max_bytes = 52428800    # undo history per session
    secret_env = ["CORP_*"]      # names or globs never passed to bash, even if allow-listed
    pass_env = ["GH_TOKEN"]      # names or globs bash gets besides the safe allow-list

:func:`tool_settings` turns the table into a session's :class:`~agentd.tools.defaults.
ToolSettings` (``ctx.settings``: every value given); :func:`describe` fills the
placeholders of a tool's description (``{max_lines}``, ``{max_kb}``, ``{max_line_chars}``,
``{bash_timeout}``, ``{bash_max_timeout}``, ``{find_max_results}``, ``{ls_max_entries}``,
``{undo_max_per_file}``, and grep's ``{grep_dialect}``) with the session's effective values,
so the model reads the limits and the regex dialect that apply to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from agentd.tools.defaults import ToolSettings
from agentd.tools.files.truncate import Limits
from agentd.tools.grep import DIALECTS
from agentd.tools.search.rg import find_rg

if TYPE_CHECKING:
    from agentd.tools.base import Tool

Positive = Annotated[int, msgspec.Meta(ge=1)]
Seconds = Annotated[float, msgspec.Meta(gt=0)]


class ToolsTable(msgspec.Struct, forbid_unknown_fields=True):
    """Limits and environment of the tools; a key left out keeps the built-in value."""

    max_output_lines: Positive | None = None
    max_output_bytes: Annotated[int, msgspec.Meta(ge=1024)] | None = None
    max_line_chars: Annotated[int, msgspec.Meta(ge=80)] | None = None
    max_image_bytes: Positive | None = None
    accept_images: bool | None = None
    bash_timeout: Seconds | None = None
    bash_max_timeout: Seconds | None = None
    bash_kill_grace: Annotated[float, msgspec.Meta(ge=0)] | None = None
    bash_spill_keep: Positive | None = None
    bash_spill_max_bytes: Annotated[int, msgspec.Meta(ge=0)] | None = None
    grep_backend: Literal["auto", "rg", "python"] | None = None
    grep_timeout: Seconds | None = None
    find_max_results: Positive | None = None
    ls_max_entries: Positive | None = None
    undo_max_per_file: Positive | None = None
    undo_max_bytes: Annotated[int, msgspec.Meta(ge=0)] | None = None
    secret_env: list[str] | None = None
    pass_env: list[str] | None = None


_NUMERIC = frozenset(ToolsTable.__struct_fields__) - {
    "accept_images",
    "grep_backend",
    "secret_env",
    "pass_env",
}


def tool_default(key: str) -> float | None:
    """The built-in value of a numeric ``[tools]`` limit (None: not a numeric limit)."""
    if key not in _NUMERIC:
        return None
    value = getattr(ToolSettings(), key)
    return float(value) if isinstance(value, int | float) else None


def tool_settings(section: Mapping[str, Any] | None) -> ToolSettings:
    """A session's tool settings from a ``[tools]`` table: its values, the defaults elsewhere.

    Raises ValueError naming the bad key (unknown key, wrong type, out of range).
    """
    try:
        table = msgspec.convert(dict(section or {}), ToolsTable)
    except msgspec.ValidationError as error:
        raise ValueError(f"invalid [tools] section in the configuration: {error}") from None
    given = {
        name: value for name, value in msgspec.structs.asdict(table).items() if value is not None
    }
    return ToolSettings(**given)


def describe(tool: Tool | type[Tool], settings: ToolSettings | None = None) -> str:
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
        "find_max_results": settings.find_max_results,
        "ls_max_entries": settings.ls_max_entries,
        "undo_max_per_file": settings.undo_max_per_file,
        "grep_dialect": DIALECTS[_grep_engine(settings.grep_backend)],
    }
    return tool.description.format_map(values)


def _grep_engine(choice: str) -> str:
    """``"rg"`` or ``"python"``: the backend grep will pick (rg when found, unless told)."""
    return "rg" if choice != "python" and find_rg() is not None else "python"
