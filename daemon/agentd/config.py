"""Settings and provider/model resolution.

Where settings come from, strongest first:

1. explicit parameters (``session/new``'s ``provider``, ``model``, ``base_url``);
2. the project file ``.agentd.toml``, the first one found from the session's cwd upwards
   (the search stops at the repository root, the directory holding ``.git``);
3. the user file ``$XDG_CONFIG_HOME/agentd/config.toml`` (``~/.config/agentd/config.toml``),
   or the file given to the daemon with ``--config FILE``;
4. the environment: ``LLM_BASE_URL`` + ``LLM_AUTH_TOKEN`` (any OpenAI-compatible server, e.g.
   a LiteLLM proxy), ``LLM_DEFAULT_MODEL``, ``LLM_SMALL_FAST_MODEL``; ``OPENAI_API_KEY`` and
   ``OPENAI_BASE_URL``; ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``.

The file format is in ``providers/README.md`` (both files have it; the project file wins key
by key, tables are merged).
Other tables (``[tools]``, ``[permissions]``…) are kept as parsed in :attr:`Config.raw`.
API keys are read from the environment only, when a model is resolved; never from a file.
A key is sent only to the endpoint it is paired with: the provider table's ``base_url`` (its
``api_key_env``), ``LLM_BASE_URL`` (``LLM_AUTH_TOKEN``), ``OPENAI_BASE_URL`` or the official
OpenAI URL (``OPENAI_API_KEY``), ``ANTHROPIC_BASE_URL`` or the official Anthropic URL
(``ANTHROPIC_API_KEY``). An explicit ``base_url`` that differs from that endpoint gets no key;
to use a key with another endpoint, configure a ``[providers.NAME]`` table for it.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from agentd.errors import ConfigError
from agentd.prices import Price, context_window, find_price, merged_prices
from agentd.protocol.methods import ModelInfo, PermissionMode

Api = Literal["openai", "anthropic", "openai-responses"]
PROJECT_FILE = ".agentd.toml"
MOCK_PROVIDER = "mock"
MOCK_MODEL = "mock-model"
OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
_BUILTIN_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}

NO_PROVIDER_HELP = """no LLM provider is configured. Any one of these works:
  • environment: OPENAI_API_KEY=… or ANTHROPIC_API_KEY=…, or for an OpenAI-compatible
    server (LiteLLM, Ollama, vLLM…) LLM_BASE_URL=… with LLM_AUTH_TOKEN=… and LLM_DEFAULT_MODEL=…
  • a config file, ~/.config/agentd/config.toml or .agentd.toml in the project:
        provider = "local"
        model = "llama3"
        [providers.local]
        api = "openai"
        base_url = "http://localhost:11434/v1"
  • the built-in offline mock model: --provider mock"""


class MissingCredentials(ConfigError):
    """No provider could be chosen, or its key is missing, from the environment looked at."""


class _ProviderSection(msgspec.Struct, forbid_unknown_fields=True):
    api: Api | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    models: list[str] = msgspec.field(default_factory=list)
    default_model: str | None = None
    context_window: Annotated[int, msgspec.Meta(gt=0)] | None = None


class _PriceSection(msgspec.Struct, forbid_unknown_fields=True):
    input: Annotated[float, msgspec.Meta(ge=0)]
    output: Annotated[float, msgspec.Meta(ge=0)]
    cache_read: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    cache_write: Annotated[float, msgspec.Meta(ge=0)] = 0.0


class _FileSettings(msgspec.Struct):
    provider: str | None = None
    model: str | None = None
    small_model: str | None = None
    max_turns: Annotated[int, msgspec.Meta(ge=1)] = 50
    permission_mode: PermissionMode = "auto"
    system_prompt: str | None = None
    system_prompt_file: str | None = None
    providers: dict[str, _ProviderSection] = msgspec.field(default_factory=dict)
    prices: dict[str, _PriceSection] = msgspec.field(default_factory=dict)


@dataclass(frozen=True)
class ProviderConfig:
    """One ``[providers.NAME]`` table."""

    name: str
    api: Api = "openai"
    base_url: str | None = None
    api_key_env: str | None = None
    models: tuple[str, ...] = ()
    default_model: str | None = None
    context_window: int | None = None


@dataclass(frozen=True)
class ModelChoice:
    """A resolved provider and model, ready for ``make_provider``.

    ``base_url`` is empty for the ``mock`` provider unless its URL was given: the provider then
    starts the shared in-process mock server on first use. ``price`` is the model's price
    (configured or built-in), None when unknown.
    """

    provider: str
    api: Api
    model: str
    base_url: str
    api_key: str | None = field(repr=False)
    context_window: int | None
    price: Price | None = None


@dataclass(frozen=True)
class Config:
    """Loaded settings (see the module docstring). ``prices`` includes the built-in table."""

    default_provider: str | None = None
    default_model: str | None = None
    small_model: str | None = None
    max_turns: int = 50
    permission_mode: PermissionMode = "auto"
    system_prompt: str | None = None
    providers: dict[str, ProviderConfig] = field(default_factory=dict)
    prices: dict[str, Price] = field(default_factory=lambda: merged_prices({}))
    raw: dict[str, Any] = field(default_factory=dict)
    files: tuple[Path, ...] = ()


def load_config(
    cwd: Path, config_file: Path | None = None, env: Mapping[str, str] | None = None
) -> Config:
    """Read the user file (or ``config_file``) and the project file above ``cwd``; merge them.

    Raises ConfigError for unreadable files, TOML syntax errors and wrong setting types.
    """
    env = os.environ if env is None else env
    if config_file is not None and not config_file.is_file():
        raise ConfigError(f"config file {config_file} does not exist")
    user_file = config_file or user_config_path(env)
    layers = [(path, _read_file(path)) for path in (user_file, find_project_file(cwd)) if path]
    merged: dict[str, Any] = {}
    for _path, raw in layers:
        merged = _merge(merged, raw)
    settings = msgspec.convert(merged, _FileSettings)
    return Config(
        default_provider=settings.provider,
        default_model=settings.model,
        small_model=settings.small_model,
        max_turns=settings.max_turns,
        permission_mode=settings.permission_mode,
        system_prompt=_system_prompt(settings),
        providers={name: _provider(name, s) for name, s in settings.providers.items()},
        prices=merged_prices({name: _price(p) for name, p in settings.prices.items()}),
        raw=merged,
        files=tuple(path for path, _raw in layers),
    )


def user_config_path(env: Mapping[str, str]) -> Path | None:
    """``$XDG_CONFIG_HOME/agentd/config.toml`` if that file exists."""
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    path = Path(base) / "agentd" / "config.toml"
    return path if path.is_file() else None


def find_project_file(cwd: Path) -> Path | None:
    """The nearest ``.agentd.toml`` from ``cwd`` up to the repository root (or ``/``)."""
    directory = cwd.resolve()
    while True:
        candidate = directory / PROJECT_FILE
        if candidate.is_file():
            return candidate
        if (directory / ".git").exists() or directory.parent == directory:
            return None
        directory = directory.parent


def resolve_model(
    config: Config,
    provider: str | None,
    model: str | None,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ModelChoice:
    """Choose provider, model, endpoint and key (precedence in the module docstring).

    ``provider="mock"`` (unless a ``[providers.mock]`` table exists) needs no configuration:
    its ``base_url`` is the given one or empty (see :class:`ModelChoice`). A ``base_url`` other
    than the provider's configured endpoint gets no API key (see the module docstring). Raises
    ConfigError saying what to set when something is missing.
    """
    env = os.environ if env is None else env
    name = provider or _default_provider(config, env)
    if name == MOCK_PROVIDER and name not in config.providers:
        chosen = model or MOCK_MODEL
        price = find_price(chosen, config.prices) if config.prices else None
        return ModelChoice(name, "openai", chosen, base_url or "", None, None, price)
    section = config.providers.get(name) or _builtin_section(name, config)
    endpoint, key_env = _endpoint(section, env)
    url = base_url or endpoint
    paired = url.rstrip("/") == endpoint.rstrip("/")
    api_key = _api_key(section, key_env, env, url) if paired else None
    use_default = provider is None or provider == config.default_provider
    chosen = model or _default_model(section, config.default_model if use_default else None, env)
    window = section.context_window or context_window(chosen)
    return ModelChoice(
        name, section.api, chosen, url, api_key, window, find_price(chosen, config.prices)
    )


def small_model_choice(
    config: Config, choice: ModelChoice, env: Mapping[str, str] | None = None
) -> ModelChoice:
    """``choice`` switched to the cheap model (``small_model``, or ``LLM_SMALL_FAST_MODEL`` for
    the ``openai`` provider) for summaries and titles; ``choice`` itself if none is set."""
    env = os.environ if env is None else env
    small = config.small_model
    if small is None and choice.provider == "openai":
        small = env.get("LLM_SMALL_FAST_MODEL")
    if not small or small == choice.model:
        return choice
    section = config.providers.get(choice.provider)
    window = (section.context_window if section else None) or context_window(small)
    price = find_price(small, config.prices)
    return ModelChoice(
        choice.provider, choice.api, small, choice.base_url, choice.api_key, window, price
    )


def list_models(config: Config, env: Mapping[str, str] | None = None) -> list[ModelInfo]:
    """Every model that can be chosen: configured ones, built-in providers that have
    credentials in the environment, and the mock."""
    env = os.environ if env is None else env
    found: dict[tuple[str, str], ModelInfo] = {}

    def add(provider: str, model: str | None) -> None:
        if model and (provider, model) not in found:
            section = config.providers.get(provider)
            window = (section.context_window if section else None) or context_window(model)
            found[(provider, model)] = ModelInfo(
                provider=provider, model=model, context_window=window
            )

    if config.default_provider:
        add(config.default_provider, config.default_model)
    for name, section in config.providers.items():
        for model in (section.default_model, *section.models):
            add(name, model)
    if "openai" not in config.providers and _has_any(env, "LLM_BASE_URL", "OPENAI_API_KEY"):
        add("openai", env.get("LLM_DEFAULT_MODEL") or _BUILTIN_MODELS["openai"])
        add("openai", env.get("LLM_SMALL_FAST_MODEL"))
    if "anthropic" not in config.providers and _has_any(env, "ANTHROPIC_API_KEY"):
        add("anthropic", _BUILTIN_MODELS["anthropic"])
    add(MOCK_PROVIDER, MOCK_MODEL)
    return list(found.values())


def _has_any(env: Mapping[str, str], *names: str) -> bool:
    return any(env.get(name) for name in names)


def _read_file(path: Path) -> dict[str, Any]:
    """One TOML file, validated, with ``system_prompt_file`` made absolute."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    try:
        msgspec.convert(raw, _FileSettings)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"config file {path}: {exc}") from exc
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


def _system_prompt(settings: _FileSettings) -> str | None:
    if settings.system_prompt is not None or settings.system_prompt_file is None:
        return settings.system_prompt
    path = Path(settings.system_prompt_file)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read system_prompt_file {path}: {exc}") from exc


def _price(section: _PriceSection) -> Price:
    return Price(section.input, section.output, section.cache_read, section.cache_write)


def _provider(name: str, section: _ProviderSection) -> ProviderConfig:
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


def _builtin_section(name: str, config: Config) -> ProviderConfig:
    if name in _BUILTIN_MODELS:
        return ProviderConfig(name, "anthropic" if name == "anthropic" else "openai")
    known = ", ".join(sorted({*config.providers, *_BUILTIN_MODELS, MOCK_PROVIDER}))
    raise ConfigError(f"unknown provider {name!r}; known providers: {known}")


def _default_provider(config: Config, env: Mapping[str, str]) -> str:
    if config.default_provider:
        return config.default_provider
    if len(config.providers) == 1:
        return next(iter(config.providers))
    if config.providers:
        names = ", ".join(sorted(config.providers))
        raise ConfigError(
            f"several providers are configured ({names}): choose one with "
            'provider = "…" in the config file, or pass provider'
        )
    if _has_any(env, "LLM_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        return "openai"
    if _has_any(env, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        return "anthropic"
    raise MissingCredentials(NO_PROVIDER_HELP)


def _endpoint(section: ProviderConfig, env: Mapping[str, str]) -> tuple[str, str | None]:
    """The base URL and the name of the variable holding the key."""
    if section.api == "anthropic":
        url = section.base_url or env.get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL
        return url, section.api_key_env or "ANTHROPIC_API_KEY"
    if section.base_url:
        return section.base_url, section.api_key_env or _openai_key_env(section)
    if env.get("LLM_BASE_URL"):
        return env["LLM_BASE_URL"], section.api_key_env or "LLM_AUTH_TOKEN"
    url = env.get("OPENAI_BASE_URL") or OPENAI_URL
    return url, section.api_key_env or "OPENAI_API_KEY"


def _openai_key_env(section: ProviderConfig) -> str | None:
    return "OPENAI_API_KEY" if section.name == "openai" else None


def _api_key(
    section: ProviderConfig, key_env: str | None, env: Mapping[str, str], url: str
) -> str | None:
    key = env.get(key_env) if key_env else None
    if key:
        return key
    if section.api_key_env:
        raise MissingCredentials(
            f"provider {section.name!r} reads its API key from ${key_env}, which is not set"
        )
    if url.rstrip("/") in (OPENAI_URL, ANTHROPIC_URL):
        raise MissingCredentials(f"provider {section.name!r} needs an API key: set ${key_env}")
    return None


def _default_model(
    section: ProviderConfig, configured_default: str | None, env: Mapping[str, str]
) -> str:
    for candidate in (configured_default, section.default_model, *section.models[:1]):
        if candidate:
            return candidate
    if section.api == "openai" and env.get("LLM_DEFAULT_MODEL"):
        return env["LLM_DEFAULT_MODEL"]
    if section.name in _BUILTIN_MODELS and section.base_url is None:
        return _BUILTIN_MODELS[section.name]
    raise ConfigError(
        f"no model chosen for provider {section.name!r}: pass one, or set "
        f'model = "…" or [providers.{section.name}] models = ["…"] in the config file'
    )
