"""Settings: where they come from and how they merge (choosing a model:
:mod:`agentd.config.models`).

Where settings come from, strongest first:

1. explicit parameters (``session/new``'s ``provider``, ``model``, ``base_url``);
2. the project file ``.agentd.toml``, the first one found from the session's cwd upwards
   (see :mod:`agentd.config.trust`: the search stops at the repository root, ``$HOME`` and ``/``;
   until the user trusts the folder, the file may only tighten settings);
3. the user file ``$XDG_CONFIG_HOME/agentd/config.toml`` (``~/.config/agentd/config.toml``),
   or the file given to the daemon with ``--config FILE``;
4. the environment: ``LLM_BASE_URL`` + ``LLM_AUTH_TOKEN`` (any OpenAI-compatible server, e.g.
   a LiteLLM proxy), ``LLM_DEFAULT_MODEL``, ``LLM_SMALL_FAST_MODEL``; ``OPENAI_API_KEY`` and
   ``OPENAI_BASE_URL``; ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``.

The file format is :class:`agentd.config.schema.ConfigFile` (strict: unknown keys are errors);
a trusted project file wins key by key over the user file, tables are merged.
:attr:`Config.settings` is the merged, validated file; :attr:`Config.raw` the same as parsed.
API keys are read from the environment only, when a model is resolved; never from a file.
A key is sent only to the endpoint it is paired with: the provider table's ``base_url`` (its
``api_key_env``), ``LLM_BASE_URL`` (``LLM_AUTH_TOKEN``), ``OPENAI_BASE_URL`` or the official
OpenAI URL (``OPENAI_API_KEY``), ``ANTHROPIC_BASE_URL`` or the official Anthropic URL
(``ANTHROPIC_API_KEY``). An explicit ``base_url`` that differs from that endpoint gets no key;
to use a key with another endpoint, configure a ``[providers.NAME]`` table for it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from agentd.config import trust
from agentd.config.prices import Price, merged_prices
from agentd.config.schema import ConfigFile, PriceSection, ProviderSection, validate
from agentd.config.textfile import NotRegularFile, read_capped_bytes, read_capped_text
from agentd.errors import ConfigError
from agentd.protocol.methods import PermissionMode

Api = Literal["openai", "anthropic", "openai-responses"]
PROJECT_FILE = trust.PROJECT_FILE
MOCK_PROVIDER = "mock"
MOCK_MODEL = "mock-model"
MOCK_BASE_URL = "http://mock.agentd.invalid/v1"  # answered in process (agentd.mockllm.transport)
USER_ONLY = ("project_rules", "telemetry")
"""Tables read from your own config file only: a project file's are ignored."""


class ProviderConfig(msgspec.Struct, frozen=True):
    """One ``[providers.NAME]`` table."""

    name: str
    api: Api = "openai"
    base_url: str | None = None
    api_key_env: str | None = None
    models: tuple[str, ...] = ()
    default_model: str | None = None
    context_window: int | None = None


class ModelChoice(msgspec.Struct, frozen=True):
    """A resolved provider and model, ready for ``make_provider``.

    ``base_url`` is :data:`MOCK_BASE_URL` for the ``mock`` provider unless its URL was given.
    ``price`` is the model's price (configured or built-in), None when unknown.
    """

    provider: str
    api: Api
    model: str
    base_url: str
    api_key: str | None
    context_window: int | None
    price: Price | None = None

    def __repr__(self) -> str:  # the key never reaches a log line or a traceback
        shown = ", ".join(
            f"{name}={'<hidden>' if name == 'api_key' and value else repr(value)}"
            for name, value in msgspec.structs.asdict(self).items()
        )
        return f"ModelChoice({shown})"


class Config(msgspec.Struct, frozen=True):
    """Loaded settings (see the module docstring).

    :attr:`settings` is the one source of every key; the other fields are what is derived
    from it: ``providers`` with their defaults filled in, ``prices`` with the built-in table,
    ``system_prompt`` read from ``system_prompt_file`` when that is how it was given.
    ``raw`` is the merged tables as parsed, for diagnostics (nothing reads settings from it).
    """

    settings: ConfigFile = msgspec.field(default_factory=ConfigFile)
    system_prompt: str | None = None
    providers: dict[str, ProviderConfig] = msgspec.field(default_factory=dict)
    prices: dict[str, Price] = msgspec.field(default_factory=lambda: merged_prices({}))
    raw: dict[str, Any] = msgspec.field(default_factory=dict)
    files: tuple[Path, ...] = ()
    extra_prompt: str | None = None
    warnings: tuple[str, ...] = ()
    untrusted_file: Path | None = None

    @property
    def default_provider(self) -> str | None:
        return self.settings.provider

    @property
    def default_model(self) -> str | None:
        return self.settings.model

    @property
    def small_model(self) -> str | None:
        return self.settings.small_model

    @property
    def max_turns(self) -> int:
        return self.settings.max_turns

    @property
    def permission_mode(self) -> PermissionMode:
        return self.settings.permission_mode


def load_config(
    cwd: Path, config_file: Path | None = None, env: Mapping[str, str] | None = None
) -> Config:
    """Read the user file (or ``config_file``) and the project file above ``cwd``; merge them.

    A project file in a folder the user has not trusted only tightens (see
    :mod:`agentd.config.trust`); what it could not change is listed in ``warnings``. Raises
    ConfigError for unreadable files, TOML syntax errors, unknown keys and wrong values.
    """
    env = os.environ if env is None else env
    if config_file is not None and not config_file.is_file():
        raise ConfigError(f"config file {config_file} does not exist")
    user_file = config_file or user_config_path(env)
    user_raw = _read_file(user_file) if user_file else {}
    project_file, warnings = trust.find_project_file(cwd, env)
    merged, files, extra, untrusted = user_raw, [user_file] if user_file else [], None, None
    if project_file is not None:
        data = _read_bytes(project_file)
        project_raw = _read_file(project_file, data)
        files.append(project_file)
        trusted = trust.file_trust(project_file, data, env)
        if trusted == "trusted":
            if _hook_scripts_changed(project_file, project_raw, env, warnings):
                project_raw = {k: v for k, v in project_raw.items() if k != "hooks"}
                untrusted = project_file
            merged = _merge(user_raw, project_raw)
            merged.update(_joined_hooks(user_raw, project_raw))
            _untrust_annotations(merged, project_raw, project_file, warnings)
        else:
            merged, extra, ignored = _tightened(user_raw, project_raw, project_file)
            if "hooks" in ignored:  # named one by one: they are code that did not run
                ignored.remove("hooks")
                warnings.append(trust.hooks_warning(project_file, project_raw["hooks"]))
                untrusted = project_file
            if trusted == "changed":
                warnings.append(trust.changed_warning(project_file))
                untrusted = project_file
            if ignored:
                warnings.append(trust.ignored_warning(project_file, ignored))
                untrusted = project_file
    merged = {k: v for k, v in merged.items() if k not in USER_ONLY}  # yours only
    merged.update({key: user_raw[key] for key in USER_ONLY if key in user_raw})
    settings = validate(merged, files[-1] if files else "(defaults)")
    return Config(
        settings=settings,
        system_prompt=_system_prompt(settings),
        providers={name: _provider(name, s) for name, s in settings.providers.items()},
        prices=merged_prices({name: _price(p) for name, p in settings.prices.items()}),
        raw=merged,
        files=tuple(files),
        extra_prompt=extra,
        warnings=tuple(warnings),
        untrusted_file=untrusted,
    )


def user_settings(
    config_file: Path | None = None, env: Mapping[str, str] | None = None
) -> tuple[ConfigFile, Path | None]:
    """The user file (or ``config_file``) alone, validated, and its path (None: no file, the
    defaults): for the daemon-wide settings (``[telemetry]``). ConfigError as
    :func:`load_config`."""
    env = os.environ if env is None else env
    if config_file is not None and not config_file.is_file():
        raise ConfigError(f"config file {config_file} does not exist")
    path = config_file or user_config_path(env)
    if path is None:
        return ConfigFile(), None
    return validate(_read_file(path), path), path


def user_config_path(env: Mapping[str, str]) -> Path | None:
    """``$XDG_CONFIG_HOME/agentd/config.toml`` if that file exists."""
    path = trust.config_dir(env) / "config.toml"
    return path if path.is_file() else None


def _tightened(
    user_raw: dict[str, Any], project_raw: dict[str, Any], project_file: Path
) -> tuple[dict[str, Any], str | None, list[str]]:
    """The user's settings tightened by an untrusted project file: the merged table, the
    project's extra system-prompt text, and the project keys that were ignored."""
    base = validate(user_raw, "(user configuration)")
    kept, ignored = trust.tighten(base, project_raw, project_file.parent)
    extras = [kept.pop("system_prompt", None), _read_prompt(kept.pop("system_prompt_file", None))]
    merged = _merge(user_raw, kept)
    for table, key in (("permissions", "deny"), ("tools", "secret_env")):
        added = kept.get(table, {}).get(key)
        if added:
            before = user_raw.get(table, {}).get(key, [])
            merged[table] = {**merged[table], key: [*before, *added]}
    extra = "\n\n".join(text for text in extras if text)
    return merged, extra or None, ignored


def _hook_scripts_changed(
    project_file: Path, project_raw: dict[str, Any], env: Mapping[str, str], warnings: list[str]
) -> bool:
    """Whether the hooks of a trusted project file must not run because its
    ``.agentd/hooks/`` folder (the scripts they run) is not the one trusted (a warning
    names them); False when it has no hooks or that folder does not exist."""
    hooks = project_raw.get("hooks")
    folder = project_file.parent / ".agentd" / "hooks"
    if not hooks:
        return False
    state, snapshot = trust.checked_folder(folder, env)
    if snapshot is None or state == "trusted":
        return False
    problem = snapshot.problem
    warnings.append(trust.hooks_warning(project_file, hooks, changed_scripts=folder))
    if problem:
        warnings.append(f"{folder} cannot be pinned: {problem}")
    return True


def _untrust_annotations(
    merged: dict[str, Any], project_raw: dict[str, Any], project_file: Path, warnings: list[str]
) -> None:
    """A server a project file defines or changes never has its tool annotations trusted:
    only the user's own file may say ``trust_annotations`` (see "MCP servers"); nor does it
    get an OAuth client secret from the daemon's environment (``oauth_client_secret_env``: a
    project could name any variable and a token endpoint to send it to)."""
    servers = merged.get("mcp_servers")
    for name in project_raw.get("mcp_servers") or {}:
        table = servers.get(name) if isinstance(servers, dict) else None
        if isinstance(table, dict) and table.pop("oauth_client_secret_env", None):
            warnings.append(
                f"{project_file} sets MCP server {name!r}, so it gets no OAuth client secret: "
                "only your own config can set oauth_client_secret_env"
            )
        if isinstance(table, dict) and table.get("trust_annotations"):
            table["trust_annotations"] = False
            warnings.append(
                f"{project_file} sets MCP server {name!r}, so its tool annotations "
                "(readOnlyHint) are not trusted: only your own config can set "
                "trust_annotations, for a server the project does not change"
            )


def _joined_hooks(user_raw: dict[str, Any], project_raw: dict[str, Any]) -> dict[str, Any]:
    """The hooks of both files, the user's first: a trusted project adds hooks to an event,
    it never replaces the user's (empty when neither file has any)."""
    user, project = user_raw.get("hooks", {}), project_raw.get("hooks", {})
    if not user and not project:
        return {}
    events = {*user, *project}
    return {"hooks": {event: [*user.get(event, []), *project.get(event, [])] for event in events}}


def _read_prompt(path: str | None) -> str | None:
    """The ``system_prompt_file``: a regular file only, never blocking, capped like an
    AGENTS.md (:mod:`agentd.config.textfile`); ConfigError saying why otherwise."""
    if path is None:
        return None
    try:
        return read_capped_text(Path(path))
    except NotRegularFile as exc:
        raise ConfigError(f"cannot read system_prompt_file: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read system_prompt_file {path}: {exc.strerror or exc}") from None


MAX_CONFIG_BYTES = 1024 * 1024


def _read_bytes(path: Path) -> bytes:
    """A config file's bytes: a regular file of at most :data:`MAX_CONFIG_BYTES`, opened
    without blocking (a FIFO planted as ``.agentd.toml`` is refused, never waited on)."""
    try:
        data = read_capped_bytes(path, MAX_CONFIG_BYTES)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path} is larger than {MAX_CONFIG_BYTES // 1024} KB")
    return data


def _read_file(path: Path, data: bytes | None = None) -> dict[str, Any]:
    """One TOML file (``data``: its bytes, already read), validated, with
    ``system_prompt_file`` made absolute."""
    import tomllib  # only when there is a file to read

    try:
        raw = tomllib.loads((_read_bytes(path) if data is None else data).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    validate(raw, path)
    prompt_file = raw.get("system_prompt_file")
    if isinstance(prompt_file, str):
        raw["system_prompt_file"] = str(path.parent / Path(prompt_file).expanduser())
    return raw


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` over ``base``, tables merged recursively; a system prompt set in
    ``override`` (text or file) replaces both forms in ``base``."""
    merged = dict(base)
    if "system_prompt" in override or "system_prompt_file" in override:
        merged.pop("system_prompt", None)
        merged.pop("system_prompt_file", None)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _system_prompt(settings: ConfigFile) -> str | None:
    if settings.system_prompt is not None or settings.system_prompt_file is None:
        return settings.system_prompt
    return _read_prompt(settings.system_prompt_file)


def _price(section: PriceSection) -> Price:
    return Price(section.input, section.output, section.cache_read, section.cache_write)


def _provider(name: str, section: ProviderSection) -> ProviderConfig:
    api: Api = section.api or ("anthropic" if name == "anthropic" else "openai")
    return ProviderConfig(
        name=name,
        api=api,
        base_url=section.base_url,
        api_key_env=section.api_key_env,
        models=tuple(section.models),
        default_model=section.default_model,
        context_window=section.context_window,
    )
