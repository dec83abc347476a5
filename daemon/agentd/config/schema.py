"""The configuration file format: one tree of msgspec Structs, strictly validated.

:class:`ConfigFile` is the whole file (``~/.config/agentd/config.toml`` and a project's
``.agentd.toml`` share it). Every table forbids unknown keys. :func:`validate` checks one
parsed file and raises :class:`~agentd.errors.ConfigError` with a message naming the file,
the key (as a dotted path) and what is wrong: the nearest valid key for a misspelt one
("did you mean permission_mode?"), the expected type, or the allowed values.

Each key is documented once, beside its field (``Annotated[…, doc("…")]``: a msgspec
``Meta`` description). :func:`reference_markdown` renders the tables, their keys, types,
defaults and those texts as the configuration reference (``agentd schema`` writes it to
``schemas/config.md``, and the same texts are the descriptions of ``config.schema.json``; the
drift test compares).

The annotations of this tree are evaluated when the module is imported (no ``from __future__
import annotations`` here, in :mod:`agentd.config.hooks` or in :mod:`agentd.tools.settings`):
msgspec then reads them as objects on the first validation, instead of compiling and
evaluating each one's string, which made the first config read of every process ~15 ms
slower (``tests/test_config_annotations.py`` keeps it so).
"""

import functools
import re
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from agentd.config.hooks import HooksSection, hook_problem
from agentd.errors import ConfigError
from agentd.protocol.mcp import server_name_problem
from agentd.protocol.methods import PermissionMode
from agentd.tools.settings import ToolsTable, tool_default

Api = Literal["openai", "anthropic", "openai-responses"]
Sandbox = Literal["none", "workspace"]
NonNegative = Annotated[float, msgspec.Meta(ge=0)]
PositiveInt = Annotated[int, msgspec.Meta(ge=1)]


def doc(text: str) -> msgspec.Meta:
    """A key's documentation, written once beside its field: it is the key's description in
    ``config.schema.json`` and its "Meaning" in the reference (:func:`reference_markdown`)."""
    return msgspec.Meta(description=text)


class ProviderSection(msgspec.Struct, forbid_unknown_fields=True):
    """An endpoint and the models it serves (``NAME`` is the provider's name)."""

    api: Annotated[Api | None, doc("wire format of the endpoint")] = None
    base_url: Annotated[str | None, doc("the endpoint; its key is sent nowhere else")] = None
    api_key_env: Annotated[
        str | None, doc("the environment variable holding the endpoint's key")
    ] = None
    models: Annotated[list[str], doc("models offered by `models/list`")] = msgspec.field(
        default_factory=list
    )
    default_model: Annotated[str | None, doc("the model when none is chosen")] = None
    context_window: Annotated[
        PositiveInt | None, doc("tokens, for compaction (known models have it built in)")
    ] = None


class PriceSection(msgspec.Struct, forbid_unknown_fields=True):
    """A model's price in US dollars per million tokens (``NAME`` is the model)."""

    input: Annotated[NonNegative, doc("per million input tokens")]
    output: Annotated[NonNegative, doc("per million output tokens")]
    cache_read: Annotated[NonNegative, doc("per million cached input tokens read")] = 0.0
    cache_write: Annotated[NonNegative, doc("per million input tokens written to the cache")] = 0.0


class PermissionsSection(msgspec.Struct, forbid_unknown_fields=True):
    """Permission rules (see "Security model") and the approval timeout in seconds."""

    allow: Annotated[list[str], doc("rules that approve calls without asking")] = msgspec.field(
        default_factory=list
    )
    deny: Annotated[list[str], doc("rules that refuse calls")] = msgspec.field(default_factory=list)
    allow_dangerous: Annotated[bool, doc("let deny-listed bash commands run")] = False
    allow_auto_without_sandbox: Annotated[
        bool, doc("let `auto` mode run without the workspace sandbox (your own config only)")
    ] = False
    timeout: Annotated[float, msgspec.Meta(gt=0), doc("seconds to wait for an approval")] = 300.0
    question_timeout: Annotated[
        float, msgspec.Meta(gt=0), doc("seconds to wait for the user's answer to a question")
    ] = 600.0


class ProjectRulesSection(msgspec.Struct, forbid_unknown_fields=True):
    """Permission rules for the sessions of one folder and the folders below it (your own
    config only; an "always in this project" answer adds one)."""

    folder: Annotated[str, doc("the folder, an absolute path")]
    allow: Annotated[list[str], doc("rules that approve calls without asking")] = msgspec.field(
        default_factory=list
    )
    deny: Annotated[list[str], doc("rules that refuse calls")] = msgspec.field(default_factory=list)


class RetrySection(msgspec.Struct, forbid_unknown_fields=True):
    """How failed provider calls are retried."""

    max_attempts: Annotated[PositiveInt, doc("tries per LLM call, the first included")] = 4
    base_delay_ms: Annotated[NonNegative, doc("first back-off, doubled per retry")] = 1000.0
    max_delay_ms: Annotated[NonNegative, doc("longest back-off")] = 30_000.0


class CompactionSection(msgspec.Struct, forbid_unknown_fields=True):
    """When the context is summarised, and how much recent context is kept verbatim."""

    keep_tokens: Annotated[PositiveInt, doc("recent context kept verbatim")] = 20_000
    reserve_tokens: Annotated[
        PositiveInt, doc("compact when the context passes window minus this")
    ] = 16_384
    context_window: Annotated[PositiveInt | None, doc("override the model's context window")] = None


class SubagentsSection(msgspec.Struct, forbid_unknown_fields=True):
    """How many subagents (``task`` calls) a session may run (see "Subagents")."""

    max_parallel: Annotated[
        PositiveInt,
        doc("subagents one session runs at the same time; further task calls wait their turn"),
    ] = 4
    max_per_run: Annotated[
        PositiveInt,
        doc(
            "subagents one prompt's run may start, its subagents' own included; past it a "
            "task call fails with an error"
        ),
    ] = 50


class McpServerSection(msgspec.Struct, forbid_unknown_fields=True):
    """An MCP server whose tools sessions get as ``mcp__NAME__TOOL`` (``NAME`` is the server's
    name; see "MCP servers")."""

    command: Annotated[
        str | None, doc("the program of a stdio server (started lazily, once per cwd)")
    ] = None
    args: Annotated[list[str], doc("its arguments")] = msgspec.field(default_factory=list)
    env: Annotated[
        dict[str, str],
        doc("variables added to the filtered environment it gets (provider keys only when named)"),
    ] = msgspec.field(default_factory=dict)
    cwd: Annotated[str | None, doc("its working directory (default: the session's cwd)")] = None
    url: Annotated[
        str | None, doc("the endpoint of a streamable HTTP server (instead of `command`)")
    ] = None
    headers: Annotated[dict[str, str], doc("HTTP headers sent to `url` (e.g. `Authorization`)")] = (
        msgspec.field(default_factory=dict)
    )
    enabled: Annotated[bool, doc("false: the server is not started")] = True
    startup_timeout: Annotated[
        Annotated[float, msgspec.Meta(gt=0)] | None,
        doc("seconds to start and initialize it (default: `mcp_startup_timeout`)"),
    ] = None
    tool_timeout: Annotated[float, msgspec.Meta(gt=0), doc("seconds a tool call may take")] = 600.0
    enabled_tools: Annotated[
        list[str] | None, doc("only these of its tools are offered (default: all)")
    ] = None
    disabled_tools: Annotated[list[str], doc("these of its tools are not offered")] = msgspec.field(
        default_factory=list
    )
    trust_annotations: Annotated[
        bool,
        doc(
            "true: a tool this server marks `readOnlyHint` runs unasked in `ask` and "
            "`read-only` sessions (honoured in your own config only, never from a project)"
        ),
    ] = False
    oauth_client_id: Annotated[
        str | None,
        doc(
            "an OAuth client ID registered with the server's authorization server "
            "(`agentctl mcp login` then registers none)"
        ),
    ] = None
    oauth_client_secret_env: Annotated[
        str | None,
        doc("the daemon's environment variable holding that client's secret (if it has one)"),
    ] = None
    oauth_callback_port: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=65535)] | None,
        doc("the loopback port of the redirect registered for it (default: any free port)"),
    ] = None


class LanguageServerSection(msgspec.Struct, forbid_unknown_fields=True):
    """A language server for the ``lsp`` tool and the diagnostics after edits.

    ``NAME`` is its name; a built-in's name changes or switches off that built-in definition
    (see "Language servers" in docs/tools.md)."""

    command: Annotated[
        str | None,
        doc("the program, speaking LSP on stdio (default: the built-in one of that name)"),
    ] = None
    args: Annotated[list[str] | None, doc("its arguments (default: the built-in ones)")] = None
    env: Annotated[dict[str, str], doc("variables added to the filtered environment it gets")] = (
        msgspec.field(default_factory=dict)
    )
    extensions: Annotated[
        list[str] | None, doc('file name endings it serves, e.g. `[".py", ".pyi"]`')
    ] = None
    languages: Annotated[
        list[str] | None,
        doc("LSP language ids it serves (`python`, `typescript`…), mapped to their endings"),
    ] = None
    root_markers: Annotated[
        list[str] | None,
        doc(
            "files or folders that mark a project root (the nearest one above a file, within "
            "the session's folder; default: the session's folder)"
        ),
    ] = None
    initialization_options: Annotated[
        dict[str, Any] | None, doc("sent as `initializationOptions` of `initialize`")
    ] = None
    settings: Annotated[
        dict[str, Any] | None,
        doc("answered to `workspace/configuration` (a section: its dotted path in this table)"),
    ] = None
    startup_timeout: Annotated[
        Annotated[float, msgspec.Meta(gt=0)] | None,
        doc("seconds to start, initialize and finish indexing (default 30)"),
    ] = None
    enabled: Annotated[bool, doc("false: the server is never started")] = True


class WebSearchSection(msgspec.Struct, forbid_unknown_fields=True):
    """The ``web_search`` tool's backend; without this table the tool is not offered."""

    backend: Annotated[
        Literal["searxng", "brave", "tavily", "provider"],
        doc(
            "`searxng` (self-hosted, no key), `brave` or `tavily` (an API key), or `provider`: "
            "the session's provider searches on its side (Anthropic, OpenAI Responses)"
        ),
    ]
    url: Annotated[
        str | None,
        doc("the SearXNG instance (required for searxng); for brave/tavily another endpoint"),
    ] = None
    api_key_env: Annotated[
        str | None,
        doc("the variable holding the key (default BRAVE_API_KEY / TAVILY_API_KEY)"),
    ] = None
    max_results: Annotated[
        int, msgspec.Meta(ge=1, le=20), doc("results per search when the model asks none")
    ] = 8
    timeout: Annotated[float, msgspec.Meta(gt=0), doc("seconds one search may take")] = 15.0
    allowed_domains: Annotated[
        list[str],
        doc("only results from these domains and their subdomains (every backend)"),
    ] = msgspec.field(default_factory=list)
    blocked_domains: Annotated[
        list[str], doc("never results from these domains (every backend)")
    ] = msgspec.field(default_factory=list)
    max_uses: Annotated[
        Annotated[int, msgspec.Meta(ge=1)] | None,
        doc("`provider`: searches one reply may make (default: the provider's limit)"),
    ] = None


class TelemetrySection(msgspec.Struct, forbid_unknown_fields=True):
    """OpenTelemetry traces and metrics (docs/telemetry.md); your own config file only.

    A project's ``[telemetry]`` is ignored. Without an endpoint here or in
    ``OTEL_EXPORTER_OTLP_*ENDPOINT`` nothing is exported and the SDK is never imported."""

    otlp_endpoint: Annotated[
        str | None,
        doc(
            "the OTLP/HTTP collector's base URL (`http://localhost:4318`: spans go to "
            "`/v1/traces`, metrics to `/v1/metrics`); wins over OTEL_EXPORTER_OTLP_ENDPOINT"
        ),
    ] = None
    enabled: Annotated[
        bool, doc("false: no telemetry even when the OTEL_EXPORTER_OTLP_* variables are set")
    ] = True
    service_name: Annotated[
        str | None,
        doc("the `service.name` resource attribute (default OTEL_SERVICE_NAME, else agentd)"),
    ] = None
    headers: Annotated[
        dict[str, str],
        doc(
            "HTTP headers of every export (replace OTEL_EXPORTER_OTLP_HEADERS when set; keep a "
            "secret one in that variable rather than in a file)"
        ),
    ] = msgspec.field(default_factory=dict)
    capture_content: Annotated[
        bool,
        doc(
            "true: spans also carry the prompt, the replies, tool arguments and tool results "
            "(redacted like session files); false: never"
        ),
    ] = False
    metrics_interval: Annotated[
        float, msgspec.Meta(gt=0), doc("seconds between metric exports")
    ] = 60.0


class ConfigFile(msgspec.Struct, forbid_unknown_fields=True):
    """One configuration file (user or project). Unset keys keep their defaults."""

    provider: Annotated[str | None, doc("the provider used when a request names none")] = None
    model: Annotated[str | None, doc("the model used when a request names none")] = None
    small_model: Annotated[str | None, doc("a cheap model for titles and summaries")] = None
    max_turns: Annotated[PositiveInt, doc("LLM calls per prompt before the run stops")] = 50
    permission_mode: Annotated[
        PermissionMode,
        doc(
            "`ask` asks before mutating tools, `read-only` refuses them, `auto` runs every call "
            '(only with `sandbox = "workspace"`, unless `permissions.allow_auto_without_sandbox`)'
        ),
    ] = "ask"
    sandbox: Annotated[
        Sandbox,
        doc(
            "`workspace` confines file tools and bash (bubblewrap, else Landlock) to the "
            "session's cwd, its control files (.git, .agentd.toml…) read-only"
        ),
    ] = "none"
    system_prompt: Annotated[str | None, doc("replaces the built-in instructions")] = None
    system_prompt_file: Annotated[
        str | None,
        doc(
            "the same, read from a file (relative to the config file; a regular file, its "
            "first 64 KiB)"
        ),
    ] = None
    providers: dict[str, ProviderSection] = msgspec.field(default_factory=dict)
    prices: dict[str, PriceSection] = msgspec.field(default_factory=dict)
    permissions: PermissionsSection = msgspec.field(default_factory=PermissionsSection)
    project_rules: Annotated[
        list[ProjectRulesSection],
        doc(
            "`[[project_rules]]` tables: `folder` and its `allow`/`deny` rules, for sessions in "
            'that folder or below (your own config only; "always in this project" adds one)'
        ),
    ] = msgspec.field(default_factory=list)
    tools: ToolsTable = msgspec.field(default_factory=ToolsTable)
    web_search: WebSearchSection | None = None
    retry: RetrySection = msgspec.field(default_factory=RetrySection)
    compaction: CompactionSection = msgspec.field(default_factory=CompactionSection)
    subagents: SubagentsSection = msgspec.field(default_factory=SubagentsSection)
    mcp_servers: dict[str, McpServerSection] = msgspec.field(default_factory=dict)
    mcp_startup_timeout: Annotated[
        float,
        msgspec.Meta(gt=0),
        doc(
            "seconds an MCP server has to start and initialize (a `[mcp_servers.NAME]` table "
            "may set its own `startup_timeout`)"
        ),
    ] = 30.0
    hooks: HooksSection = msgspec.field(default_factory=HooksSection)
    language_servers: dict[str, LanguageServerSection] = msgspec.field(default_factory=dict)
    telemetry: TelemetrySection = msgspec.field(default_factory=TelemetrySection)


_DICT_TABLES = {"providers", "prices", "mcp_servers", "language_servers"}
_PATH = re.compile(r" - at `\$(?P<path>[^`]*)`$")


def validate(raw: dict[str, Any], source: Path | str) -> ConfigFile:
    """``raw`` (one parsed TOML file) as a :class:`ConfigFile`.

    Raises ConfigError ``"<source>: <problem>"``: an unknown key with the nearest valid one,
    a wrong type with the expected one, a bad value with the allowed ones.
    """
    problem = unknown_key(raw, ConfigFile, "")
    if problem is not None:
        raise ConfigError(f"config file {source}: {problem}")
    try:
        settings = msgspec.convert(raw, ConfigFile)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"config file {source}: {_explain(str(exc), raw)}") from None
    problem = hook_problem(settings.hooks) or _server_names_problem(settings.mcp_servers)
    if problem is not None:
        raise ConfigError(f"config file {source}: {problem}")
    return settings


def _server_names_problem(servers: dict[str, McpServerSection]) -> str | None:
    for name in servers:
        problem = server_name_problem(name)
        if problem is not None:
            return f"table [mcp_servers.{name}]: {problem}"
    return None


def unknown_key(raw: Any, struct: type[msgspec.Struct], prefix: str) -> str | None:
    """A sentence about the first key of ``raw`` that ``struct`` does not have, or None."""
    if not isinstance(raw, dict):
        return None
    fields = _field_types(struct)
    for key, value in raw.items():
        if key not in fields:
            return _unknown_message(prefix + key, key, list(fields))
        inner = _struct_of(fields[key])
        if inner is not None:
            problem = unknown_key(value, inner, f"{prefix}{key}.")
        elif key in _DICT_TABLES and isinstance(value, dict):
            problem = _unknown_in_entries(value, fields[key], f"{prefix}{key}.")
        elif (item := _list_struct(fields[key])) is not None and isinstance(value, list):
            problem = _unknown_in_items(value, item, f"{prefix}{key}")
        else:
            problem = None
        if problem is not None:
            return problem
    return None


def _unknown_in_entries(raw: dict[str, Any], kind: Any, prefix: str) -> str | None:
    value_type = typing.get_args(kind)[1]
    for name, entry in raw.items():
        problem = unknown_key(entry, value_type, f"{prefix}{name}.")
        if problem is not None:
            return problem
    return None


def _unknown_in_items(raw: list[Any], item: type[msgspec.Struct], prefix: str) -> str | None:
    for index, entry in enumerate(raw):
        problem = unknown_key(entry, item, f"{prefix}[{index}].")
        if problem is not None:
            return problem
    return None


def _list_struct(kind: Any) -> type[msgspec.Struct] | None:
    """The Struct of ``list[X]`` (also inside ``Annotated``), or None: an array of tables."""
    if typing.get_origin(kind) is Annotated:
        kind = typing.get_args(kind)[0]
    if typing.get_origin(kind) is list:
        return _struct_of(typing.get_args(kind)[0])
    return None


def _unknown_message(path: str, key: str, valid: list[str]) -> str:
    import difflib  # only for a config error

    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    table = path.rsplit(".", 1)[0] if "." in path else ""
    where = f"in [{table}] " if table else ""
    return f"unknown key {path!r} {where}{hint}; valid keys: {', '.join(valid)}".replace(
        " ;", ";"
    ).replace("  ", " ")


def _explain(message: str, raw: dict[str, Any]) -> str:
    """msgspec's validation message rewritten with a dotted key (a table's own name where
    msgspec says ``[...]``) and the allowed values."""
    match = _PATH.search(message)
    path = (match["path"] if match else "").lstrip(".")
    text = message[: match.start()] if match else message
    allowed = _allowed_values(path)
    key = _named_tables(path, raw) or "(top level)"
    if allowed and ("Invalid enum value" in text or "Expected `str`" in text):
        return f"{key} must be one of {', '.join(repr(v) for v in allowed)} ({text})"
    return f"key {key}: {text}"


def _named_tables(path: str, raw: dict[str, Any]) -> str:
    """``path`` with its ``[...]`` (a key in a table of tables, which msgspec does not name)
    replaced by the first key whose table fails validation: ``providers[...].api`` becomes
    ``providers.local.api``."""
    head, sep, rest = path.partition("[...]")
    tables = _lookup(raw, head)
    value_type = _value_type(head)
    if not sep or not isinstance(tables, dict) or value_type is None:
        return path
    for name, table in tables.items():
        try:
            msgspec.convert(table, value_type)
        except msgspec.ValidationError:
            return f"{head}.{name}{rest}"
    return path


def _value_type(dotted: str) -> Any:
    """The type of the values of the table of tables at ``dotted`` (None if it is not one)."""
    kind: Any = ConfigFile
    for part in dotted.split("."):
        struct = _struct_of(kind)
        kind = _field_types(struct).get(part) if struct is not None else None
    return typing.get_args(kind)[1] if typing.get_origin(kind) is dict else None


def _lookup(raw: Any, dotted: str) -> Any:
    for part in filter(None, dotted.split(".")):
        raw = raw.get(part) if isinstance(raw, dict) else None
    return raw


def _allowed_values(path: str) -> list[Any]:
    """The Literal values allowed at the dotted ``path`` (empty when it is not a Literal);
    ``[...]`` steps into the values of a table of tables."""
    kind: Any = ConfigFile
    for part in path.replace("[...]", "[*]").split("."):
        struct = _struct_of(kind)
        if struct is None:
            return []
        kind = _field_types(struct).get(part.split("[")[0])
        if kind is None:
            return []
        if part.endswith("[*]") and typing.get_origin(kind) is dict:
            kind = typing.get_args(kind)[1]
    return _literal_values(kind)


def _literal_values(kind: Any) -> list[Any]:
    if typing.get_origin(kind) is Literal:
        return list(typing.get_args(kind))
    values: list[Any] = []
    for arg in typing.get_args(kind):
        values += _literal_values(arg)
    return values


@functools.cache
def _field_types(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """Each field of ``struct`` and its type, ``Annotated`` kept (computed once per Struct:
    resolving the hints was most of the cost of validating a file; do not mutate it)."""
    hints = typing.get_type_hints(struct, include_extras=True)
    return {name: hints[name] for name in struct.__struct_fields__}


def _struct_of(kind: Any) -> type[msgspec.Struct] | None:
    """The Struct inside ``kind`` (``X``, ``X | None``, ``Annotated[X, …]``), or None."""
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return kind
    if typing.get_origin(kind) in (types.UnionType, typing.Union, Annotated):
        for arg in typing.get_args(kind):
            found = _struct_of(arg)
            if found is not None:
                return found
    return None


def _type_name(kind: Any) -> str:
    origin = typing.get_origin(kind)
    if origin is Annotated:
        return _type_name(typing.get_args(kind)[0])
    if origin is Literal:
        return " or ".join(f'`"{v}"`' for v in typing.get_args(kind))
    if origin in (types.UnionType, typing.Union):
        parts = [_type_name(a) for a in typing.get_args(kind) if a is not type(None)]
        return " or ".join(parts)
    if origin is list and _struct_of(typing.get_args(kind)[0]) is not None:
        return "array of tables"
    if origin is list:
        return f"list of {_type_name(typing.get_args(kind)[0])}"
    if origin is dict:
        return "table"
    names: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
    return names.get(kind) or str(getattr(kind, "__name__", kind))


def _default_text(struct: type[msgspec.Struct], name: str) -> str:
    info = {f.name: f for f in msgspec.structs.fields(struct)}[name]
    if info.default is not msgspec.NODEFAULT:
        value = info.default
    elif info.default_factory is not msgspec.NODEFAULT:
        value = info.default_factory()
    else:
        return "required"
    if value is None:
        builtin = tool_default(name) if struct is ToolsTable else None
        return "—" if builtin is None else f"`{builtin:g}`"
    if isinstance(value, msgspec.Struct | dict) or value == []:
        return "" if not isinstance(value, list) else "[]"
    return f"`{msgspec.json.encode(value).decode()}`"


def reference_markdown() -> str:
    """The configuration reference: one table per section of :class:`ConfigFile`."""
    sections: list[tuple[str, type[msgspec.Struct]]] = [("(top level)", ConfigFile)]
    for name, kind in _field_types(ConfigFile).items():
        struct = _struct_of(kind)
        if struct is not None:
            sections.append((f"[{name}]", struct))
            sections += [
                (f"[{name}.{sub}]", inner)
                for sub, kind in _field_types(struct).items()
                if (inner := _struct_of(kind)) is not None
            ]
            items = {_list_struct(kind) for kind in _field_types(struct).values()} - {None}
            sections += [(f"[[{name}.EVENT]]", item) for item in items if item is not None]
        elif name in _DICT_TABLES:
            sections.append((f"[{name}.NAME]", typing.get_args(kind)[1]))
    lines: list[str] = []
    for title, struct in sections:
        lines += [f"**{title}** — {_first_line(struct)}", ""]
        lines += ["| Key | Type | Default | Meaning |", "|---|---|---|---|"]
        for name, kind in _field_types(struct).items():
            if _struct_of(kind) is not None or name in _DICT_TABLES:
                continue
            default, meaning = _default_text(struct, name), _description(kind)
            lines.append(f"| `{name}` | {_type_name(kind)} | {default} | {meaning} |")
        lines.append("")
    return "\n".join(lines)


def _description(kind: Any) -> str:
    """The ``doc(...)`` text of a field's type (empty when it has none)."""
    if typing.get_origin(kind) is not Annotated:
        return ""
    found = [m.description for m in kind.__metadata__ if isinstance(m, msgspec.Meta)]
    return next((text for text in reversed(found) if text), "")


def _first_line(struct: type[msgspec.Struct]) -> str:
    return (struct.__doc__ or "").strip().splitlines()[0]
