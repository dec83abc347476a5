"""Choosing a provider, model, endpoint and key from a :class:`~agentd.config.load.Config` and
the environment (the precedence and the key pairing are in :mod:`agentd.config.load`'s docstring).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agentd.config import trust
from agentd.config.load import (
    MOCK_BASE_URL,
    MOCK_MODEL,
    MOCK_PROVIDER,
    Config,
    ModelChoice,
    ProviderConfig,
)
from agentd.config.prices import context_window, find_price
from agentd.errors import ConfigError
from agentd.protocol.methods import ModelInfo

OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
_BUILTIN_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}


def no_provider_help(config: Config, env: Mapping[str, str]) -> str:
    """What to set when no provider is configured: only what would work for ``config``'s
    folder — a project file counts only once its folder is trusted, and an untrusted one that
    holds settings is named with the command that trusts it."""
    user_file = trust.config_dir(env) / "config.toml"
    lines = ["no LLM provider is configured."]
    if config.untrusted_file is not None:
        folder = config.untrusted_file.parent
        lines.append(
            f"  {config.untrusted_file} has settings that apply only in a trusted folder; "
            f"to use them: agentctl trust {folder}"
        )
    lines += [
        "Any one of these works:",
        "  • environment: OPENAI_API_KEY=… or ANTHROPIC_API_KEY=…, or for an OpenAI-compatible",
        "    server (LiteLLM, Ollama, vLLM…) LLM_BASE_URL=… with LLM_AUTH_TOKEN=… and "
        "LLM_DEFAULT_MODEL=…",
        f"  • your config file, {user_file}:",
        '        provider = "local"',
        '        model = "llama3"',
        "        [providers.local]",
        '        api = "openai"',
        '        base_url = "http://localhost:11434/v1"',
        "    (a project's .agentd.toml may hold the same once you trust its folder: "
        "agentctl trust DIR)",
        "  • the built-in offline mock model: --provider mock",
    ]
    return "\n".join(lines)


class MissingCredentials(ConfigError):
    """No provider could be chosen, or its key is missing, from the environment looked at.
    ``data`` is ``{"untrustedConfig": path}`` when an untrusted project file was left out, so a
    client can offer to trust its folder."""


def resolve_model(
    config: Config,
    provider: str | None,
    model: str | None,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ModelChoice:
    """Choose provider, model, endpoint and key (precedence in the module docstring).

    ``provider="mock"`` (unless a ``[providers.mock]`` table exists) needs no configuration:
    its ``base_url`` is the given one or :data:`MOCK_BASE_URL`. A ``base_url`` other
    than the provider's configured endpoint gets no API key (see the module docstring). Raises
    ConfigError saying what to set when something is missing.
    """
    env = os.environ if env is None else env
    name = provider or _default_provider(config, env)
    if name == MOCK_PROVIDER and name not in config.providers:
        configured = config.default_model if name == config.default_provider else None
        chosen = model or configured or MOCK_MODEL
        price = find_price(chosen, config.prices) if config.prices else None
        return ModelChoice(name, "openai", chosen, base_url or MOCK_BASE_URL, None, None, price)
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
    untrusted = config.untrusted_file
    raise MissingCredentials(
        no_provider_help(config, env),
        data={"untrustedConfig": str(untrusted)} if untrusted is not None else None,
    )


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
