"""Generate the JSON Schemas in ``schemas/`` and the tables of ``schemas/README.md``.

Everything comes from the wire types, so the documents cannot drift from the code:

* ``protocol.schema.json``: every method of :data:`agentd.protocol.table.METHODS` (params,
  result, direction, description), the ``session/event`` notification and its :data:`Event`
  union, ``$/cancelRequest`` and the error codes; all types under ``$defs``.
* ``session.schema.json``: the session file's header and entry types, written only when
  :mod:`agentd.protocol.session_file` exists (with ``SessionHeader`` and ``Entry``).
* ``config.schema.json`` and ``config.md``: the configuration file format and its reference,
  from :class:`agentd.config.schema.ConfigFile`.
* ``agentd/api/methods.py``: the :class:`SessionMethods` Protocol (one method per ``call`` of
  the table: its params and result types), which :class:`agentd.api.SessionApi` extends — so
  adding a method is its types, its table entry and its service method, then ``make schema``.
* ``agentd/tools/catalog.json``: every built-in tool's name, kind, description template and
  parameters' JSON Schema (:mod:`agentd.tools.catalog`), so a session's tool list is built
  without importing the tools.
* ``README.md``: the hand-written protocol document; only the blocks between
  ``<!-- BEGIN GENERATED name -->`` and ``<!-- END GENERATED name -->`` are rewritten
  (``methods``, ``events``, ``errors``).

``agentd schema`` writes the files; ``agentd schema --check`` and the drift test compare.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import msgspec

from agentd import errors
from agentd.api.generate import API_METHODS_FILE, api_methods_source
from agentd.protocol import content as content_types
from agentd.protocol import events, methods
from agentd.protocol.events import Event, SessionEvent
from agentd.protocol.methods import PROTOCOL_VERSION
from agentd.protocol.table import METHODS, MethodSpec
from agentd.protocol.tool_details import ToolDetails
from agentd.tools import catalog_source
from agentd.tools.catalog import CATALOG_FILE

DRAFT = "https://json-schema.org/draft/2020-12/schema"
REF_TEMPLATE = "#/$defs/{name}"
SESSION_FILE_MODULE = "agentd.protocol.session_file"
PROTOCOL_FILE = "protocol.schema.json"
SESSION_FILE = "session.schema.json"
README_FILE = "README.md"
CONFIG_SCHEMA_FILE = "config.schema.json"
CONFIG_DOC_FILE = "config.md"
_CONFIG_DOC_HEAD = """# Configuration reference

Generated from `agentd.config.schema.ConfigFile` by `agentd schema` (`make schema`); do not
edit by hand. The same keys are valid in the user file (`$XDG_CONFIG_HOME/agentd/config.toml`)
and in a project's `.agentd.toml`; an unknown or misspelt key is an error naming the file, the
key and the nearest valid one. What an untrusted project file may change is in
[the security model](../docs/security.md#trusted-sources-and-project-files).
`config.schema.json` is the same format as a JSON Schema (TOML editors such as Taplo can
validate with it).

"""
DIRECTIONS = {"client": "client → daemon", "server": "daemon → client"}
_BLOCK = re.compile(
    r"(<!-- BEGIN GENERATED (?P<name>[a-z]+) -->\n).*?(<!-- END GENERATED (?P=name) -->)",
    re.DOTALL,
)
_TREE_LINE = re.compile(r"(?P<name>[A-Z]\w+)\s+(?P<code>-\d+)\s+(?P<text>.+)")
_CANCEL_PARAMS = {
    "type": "object",
    "properties": {"id": {"type": ["integer", "number", "string", "null"]}},
    "required": ["id"],
}


def default_schema_dir() -> Path:
    """``schemas/`` of the source tree when running from it, else ``./schemas``."""
    tree = Path(__file__).resolve().parents[2] / "schemas"
    return tree if tree.is_dir() else Path.cwd() / "schemas"


def _dump(document: dict[str, Any]) -> str:
    return json.dumps(_canonical(document), indent=2, ensure_ascii=False) + "\n"


_NULL = {"type": "null"}


def _canonical(node: Any) -> Any:
    """``node`` in one form whichever msgspec release wrote it.

    Releases differ in whether they clean a docstring before writing it as a ``description``
    and in where an optional field's ``{"type": "null"}`` stands in its ``anyOf``; here every
    description is dedented as :func:`inspect.cleandoc` does and ``null`` comes last, so the
    generated files (and the drift test) do not depend on which release pip picked."""
    if isinstance(node, list):
        return [_canonical(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            out[key] = inspect.cleandoc(value)
        elif key == "anyOf" and isinstance(value, list):
            others = [_canonical(item) for item in value if item != _NULL]
            out[key] = others + [_NULL] * (len(value) - len(others))
        else:
            out[key] = _canonical(value)
    return out


def protocol_schema() -> dict[str, Any]:
    """The protocol document: methods, notifications, errors and every type in ``$defs``."""
    types: list[Any] = []
    for spec in METHODS.values():
        types += [spec.params, spec.result]
    types += [ToolDetails, Event, SessionEvent]
    schemas, components = msgspec.json.schema_components(types, ref_template=REF_TEMPLATE)
    defs = _name_union(dict(sorted(components.items())), "ToolDetails", schemas[-3])
    defs["Event"] = {"description": "Every agent event, tagged by `type`.", **schemas[-2]}
    methods = {
        name: {
            "direction": spec.direction,
            "transports": _transports(spec),
            "description": spec.doc,
            "params": schemas[2 * index],
            "result": schemas[2 * index + 1],
        }
        for index, (name, spec) in enumerate(METHODS.items())
    }
    return {
        "$schema": DRAFT,
        "title": "agentd JSON-RPC 2.0 protocol",
        "description": "direction: `client` methods are called by clients, `server` methods "
        "by the daemon; transports: `jsonrpc` (socket, stdio, TCP) and `http` (the web API, "
        "POST /api/<method>). See schemas/README.md for framing and lifecycle.",
        "protocolVersion": PROTOCOL_VERSION,
        "$defs": defs,
        "methods": methods,
        "notifications": {
            "session/event": schemas[-1],
            "$/cancelRequest": _CANCEL_PARAMS,
        },
        "errors": [
            {"code": code, "name": name, "description": text} for code, name, text in error_rows()
        ],
    }


_UNION_DOCS = {"ToolDetails": "A finished tool call's details, tagged by `type`."}


def _name_union(defs: dict[str, Any], name: str, union: dict[str, Any]) -> dict[str, Any]:
    """``defs`` with ``union`` (a schema msgspec writes inline wherever it is used) defined
    once as ``name`` and every inline copy replaced by a reference to it."""

    def swap(node: Any) -> Any:
        if node == union:
            return {"$ref": REF_TEMPLATE.format(name=name)}
        if isinstance(node, dict):
            return {key: swap(value) for key, value in node.items()}
        if isinstance(node, list):
            return [swap(value) for value in node]
        return node

    return {**swap(defs), name: {"description": _UNION_DOCS[name], **union}}


def session_schema() -> dict[str, Any] | None:
    """The session file document, or None when the session file types do not exist (yet)."""
    if importlib.util.find_spec(SESSION_FILE_MODULE) is None:
        return None
    module = importlib.import_module(SESSION_FILE_MODULE)
    header, entry = getattr(module, "SessionHeader", None), getattr(module, "Entry", None)
    if header is None or entry is None:
        return None
    (header_ref, entry_schema, details), components = msgspec.json.schema_components(
        [header, entry, ToolDetails], ref_template=REF_TEMPLATE
    )
    defs = _name_union(dict(sorted(components.items())), "ToolDetails", details)
    return {
        "$schema": DRAFT,
        "title": "agentd session file (JSONL)",
        "description": "The first line is a `header`; every later line is one `entry`. "
        "Lines are separated by LF only.",
        "$defs": defs,
        "header": header_ref,
        "entry": entry_schema,
    }


# --- README tables ----------------------------------------------------------------------


def error_rows() -> list[tuple[int, str, str]]:
    """``(code, class name, meaning)`` for every error class, in declaration order."""
    tree = {
        match["name"]: match["text"].strip()
        for line in (errors.__doc__ or "").splitlines()
        if (match := _TREE_LINE.search(line))
    }
    rows = []
    for cls in errors.ERROR_CLASSES:
        own_doc = cls.__dict__.get("__doc__")
        text = own_doc.strip().splitlines()[0] if own_doc else tree.get(cls.__name__, "")
        rows.append((cls.code, cls.__name__, text))
    return rows


def _fields(tp: Any, *, from_daemon: bool) -> str:
    """Field names; ``?`` marks those the sender may leave out (the daemon only does so for
    types that omit defaults)."""
    if not (isinstance(tp, type) and issubclass(tp, msgspec.Struct)):
        return "—"
    config = tp.__struct_config__
    always = from_daemon and not config.omit_defaults
    names = [
        f"`{field.encode_name}`" + ("" if field.required or always else "?")
        for field in msgspec.structs.fields(tp)
        if field.encode_name != config.tag_field
    ]
    return ", ".join(names) or "(none)"


def _first_line(tp: Any) -> str:
    return (tp.__doc__ or "").strip().split("\n")[0].replace("|", "\\|")


def _transports(spec: MethodSpec) -> list[str]:
    """Where a method is served: ``jsonrpc`` and/or ``http`` (the web API)."""
    return [name for name, served in (("jsonrpc", spec.rpc), ("http", spec.http)) if served]


def methods_table() -> str:
    """The Markdown table of every method (Direction says where it is served)."""
    lines = ["| Method | Direction | Params | Result | Description |", "|---|---|---|---|---|"]
    for name, spec in METHODS.items():
        by_client = spec.direction == "client"
        params = f"`{spec.params.__name__}`: {_fields(spec.params, from_daemon=not by_client)}"
        result = f"`{spec.result.__name__}`: {_fields(spec.result, from_daemon=by_client)}"
        direction = DIRECTIONS.get(spec.direction, spec.direction)
        if spec.http:
            direction += ", web API" if spec.rpc else " (web API only)"
        lines.append(f"| `{name}` | {direction} | {params} | {result} | {spec.doc} |")
    return "\n".join(lines) + "\n"


def event_types() -> list[Any]:
    """Every Struct of the :data:`Event` union, in declaration order."""
    return list(Event.__args__)


def events_table() -> str:
    """The Markdown table of every event of the ``session/event`` notification."""
    lines = ["| `type` | Struct | Fields | Meaning |", "|---|---|---|---|"]
    for tp in event_types():
        tag = tp.__struct_config__.tag
        fields = _fields(tp, from_daemon=True)
        lines.append(f"| `{tag}` | `{tp.__name__}` | {fields} | {_first_line(tp)} |")
    return "\n".join(lines) + "\n"


def details_table() -> str:
    """The Markdown table of every tool details type (``details`` of a finished call)."""
    lines = ["| `type` | Struct | Fields | Meaning |", "|---|---|---|---|"]
    for tp in get_args(ToolDetails):
        tag = tp.__struct_config__.tag
        fields = _fields(tp, from_daemon=True)
        lines.append(f"| `{tag}` | `{tp.__name__}` | {fields} | {_first_line(tp)} |")
    return "\n".join(lines) + "\n"


def errors_table() -> str:
    """The Markdown table of every error code."""
    lines = ["| Code | Name | Meaning | HTTP |", "|---|---|---|---|"]
    statuses = {cls.__name__: cls.http_status for cls in errors.ERROR_CLASSES}
    lines += [
        f"| {code} | `{name}` | {text} | {statuses[name]} |" for code, name, text in error_rows()
    ]
    return "\n".join(lines) + "\n"


def enums_table() -> str:
    """The Markdown table of every enumeration the protocol uses, with all its values."""
    enums = [
        ("StopReason", content_types.StopReason, "an assistant message's / a turn's `stopReason`"),
        ("RunStopReason", events.RunStopReason, "`agent_end` and `session/prompt` `stopReason`"),
        ("ToolKind", events.ToolKind, "`tool_execution_start` `kind`"),
        ("PermissionOption", events.PermissionOption, "answers to `session/requestPermission`"),
        ("PermissionMode", methods.PermissionMode, "a session's `permissionMode`"),
        ("RunPhase", methods.RunPhase, "`session/state` `phase`"),
    ]
    deltas = [tp.__struct_config__.tag for tp in get_args(events.Delta)]
    lines = ["| Enumeration | Values | Where |", "|---|---|---|"]
    for name, literal, where in enums:
        values = ", ".join(f"`{value}`" for value in get_args(literal))
        lines.append(f"| `{name}` | {values} | {where} |")
    delta_values = ", ".join(f"`{tag}`" for tag in deltas)
    lines.append(f"| delta `type` | {delta_values} | `message_update` `delta` |")
    return "\n".join(lines) + "\n"


TABLES: dict[str, Callable[[], str]] = {
    "methods": methods_table,
    "events": events_table,
    "details": details_table,
    "errors": errors_table,
    "enums": enums_table,
}


def render_readme(current: str) -> str:
    """``current`` with every generated block replaced by a fresh table.

    Raises ValueError when a block of :data:`TABLES` has no markers in ``current``.
    """
    missing = set(TABLES) - {match["name"] for match in _BLOCK.finditer(current)}
    if missing:
        raise ValueError(f"README lacks generated blocks: {', '.join(sorted(missing))}")

    def replace(match: re.Match[str]) -> str:
        table = TABLES.get(match["name"])
        if table is None:
            return match[0]
        return f"{match[1]}\n{table()}\n{match[3]}"

    return _BLOCK.sub(replace, current)


# --- files ------------------------------------------------------------------------------


def config_schema() -> dict[str, Any]:
    """The configuration file as a JSON Schema."""
    from agentd.config.schema import ConfigFile

    return {"$schema": DRAFT, "title": "agentd configuration file (TOML)"} | msgspec.json.schema(
        ConfigFile
    )


def config_doc() -> str:
    """The configuration reference (Markdown)."""
    from agentd.config.schema import reference_markdown

    return _CONFIG_DOC_HEAD + reference_markdown()


def generate(out_dir: Path) -> dict[str, str | None]:
    """File name → fresh content (None: the file should not exist), in memory."""
    session = session_schema()
    readme = out_dir / README_FILE
    return {
        PROTOCOL_FILE: _dump(protocol_schema()),
        SESSION_FILE: _dump(session) if session is not None else None,
        CONFIG_SCHEMA_FILE: _dump(config_schema()),
        CONFIG_DOC_FILE: config_doc(),
        README_FILE: render_readme(readme.read_text(encoding="utf-8")),
    }


def _outputs(out_dir: Path) -> dict[Path, str | None]:
    """Every generated file and its fresh content (None: it should not exist)."""
    files: dict[Path, str | None] = {out_dir / n: c for n, c in generate(out_dir).items()}
    files[API_METHODS_FILE] = api_methods_source()
    files[CATALOG_FILE] = catalog_source()
    return files


def check(out_dir: Path) -> list[str]:
    """Names of the generated files that differ from a fresh generation."""
    drifted = []
    for path, content in _outputs(out_dir).items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != content:
            drifted.append(path.name if path.parent == out_dir else str(path))
    return drifted


def write(out_dir: Path) -> list[Path]:
    """Regenerate the generated files; return the paths written or removed."""
    changed = []
    for path, content in _outputs(out_dir).items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == content:
            continue
        if content is None:
            path.unlink()
        else:
            path.write_text(content, encoding="utf-8")
        changed.append(path)
    return changed
