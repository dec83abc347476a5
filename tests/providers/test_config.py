"""Config files, provider/model resolution precedence, and the clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.config.credentials import credential_env_names
from agentd.config.load import MOCK_BASE_URL, load_config
from agentd.config.models import list_models, no_provider_help, resolve_model, small_model_choice
from agentd.config.prices import Price
from agentd.errors import ConfigError
from agentd.protocol.trust_list import add_trusted


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty home with an XDG config dir and a repository inside."""
    (tmp_path / "xdg" / "agentd").mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src" / "pkg").mkdir(parents=True)
    add_trusted(tmp_path / "repo", env_for(tmp_path))
    return tmp_path


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg"), **extra}


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def write_trusted(home: Path, path: Path, text: str) -> Path:
    """Write a project file and trust its folder with this content (trust is pinned)."""
    write(path, text)
    add_trusted(path.parent, env_for(home))
    return path


def test_nothing_configured_is_a_clear_error(home: Path) -> None:
    """No files, no env: ConfigError explaining env vars, a config snippet and the mock."""
    env = env_for(home)
    config = load_config(home / "repo", env=env)
    with pytest.raises(ConfigError) as caught:
        resolve_model(config, None, None, env=env)
    message = caught.value.message
    assert message == no_provider_help(config, env)
    assert caught.value.data is None
    for hint in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "LLM_BASE_URL",
        "[providers.local]",
        "--provider mock",
    ):
        assert hint in message


def test_environment_only(home: Path) -> None:
    """OPENAI_API_KEY alone gives the OpenAI provider with a built-in default model."""
    env = env_for(home, OPENAI_API_KEY="sk-abc")
    choice = resolve_model(load_config(home, env=env), None, None, env=env)
    assert (choice.provider, choice.api, choice.model) == ("openai", "openai", "gpt-4o-mini")
    assert (choice.base_url, choice.api_key) == ("https://api.openai.com/v1", "sk-abc")
    assert choice.price == Price(0.15, 0.60, cache_read=0.075)
    assert choice.context_window == 128_000
    assert "sk-abc" not in repr(choice)


def test_llm_gateway_variables(home: Path) -> None:
    """LLM_BASE_URL + LLM_AUTH_TOKEN + LLM_DEFAULT_MODEL point at any compatible server."""
    env = env_for(
        home,
        LLM_BASE_URL="https://gateway.test",
        LLM_AUTH_TOKEN="tok-1",
        LLM_DEFAULT_MODEL="azure/gpt-5-1",
        LLM_SMALL_FAST_MODEL="azure/gpt-5-mini",
        OPENAI_API_KEY="sk-not-for-the-gateway",
    )
    config = load_config(home, env=env)
    choice = resolve_model(config, None, None, env=env)
    assert (choice.base_url, choice.api_key, choice.model) == (
        "https://gateway.test",
        "tok-1",
        "azure/gpt-5-1",
    )
    small = small_model_choice(config, choice, env=env)
    assert small.model == "azure/gpt-5-mini"
    assert small.price == Price(0.25, 2.00, cache_read=0.025)


def test_anthropic_from_environment(home: Path) -> None:
    """ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL) select the Anthropic provider."""
    env = env_for(home, ANTHROPIC_API_KEY="sk-ant-x", ANTHROPIC_BASE_URL="http://proxy.test")
    choice = resolve_model(load_config(home, env=env), None, None, env=env)
    assert (choice.provider, choice.api, choice.base_url) == (
        "anthropic",
        "anthropic",
        "http://proxy.test",
    )
    assert choice.model == "claude-sonnet-4-5"
    assert choice.context_window == 200_000


def test_precedence_explicit_project_user_env(home: Path) -> None:
    """Explicit params beat the project file, which beats the user file, which beats env."""
    env = env_for(home, OPENAI_API_KEY="sk-abc")
    write(
        home / "xdg" / "agentd" / "config.toml",
        'provider = "openai"\nmodel = "gpt-4o"\nmax_turns = 7\n',
    )
    repo = home / "repo"
    cwd = repo / "src" / "pkg"
    assert resolve_model(load_config(cwd, env=env), None, None, env=env).model == "gpt-4o"
    write_trusted(home, repo / ".agentd.toml", 'model = "gpt-4.1"\n')
    config = load_config(cwd, env=env)
    assert config.max_turns == 7
    assert resolve_model(config, None, None, env=env).model == "gpt-4.1"
    assert resolve_model(config, None, "o3", env=env).model == "o3"
    explicit = resolve_model(config, "openai", None, "http://other.test/v1", env=env)
    assert (explicit.model, explicit.base_url) == ("gpt-4.1", "http://other.test/v1")
    assert config.files == (home / "xdg" / "agentd" / "config.toml", repo / ".agentd.toml")


def test_project_file_search_stops_at_the_repository_root(home: Path) -> None:
    """A .agentd.toml above the repository, or in $HOME itself, is not read."""
    write(home / ".agentd.toml", 'model = "outside"\n')
    env = env_for(home)
    add_trusted(home, env)
    assert load_config(home / "repo" / "src", env=env).default_model is None
    assert load_config(home, env=env).default_model is None
    (home / "plain" / "sub").mkdir(parents=True)
    write_trusted(home, home / "plain" / ".agentd.toml", 'model = "above"\n')
    assert load_config(home / "plain" / "sub", env=env).default_model == "above"


def test_config_file_option_replaces_the_user_file(home: Path) -> None:
    """``--config FILE`` is read instead of the XDG file; a missing one is an error."""
    write(home / "xdg" / "agentd" / "config.toml", 'model = "xdg"\n')
    other = write(home / "other.toml", 'model = "given"\n')
    env = env_for(home)
    assert load_config(home, other, env=env).default_model == "given"
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(home, home / "missing.toml", env=env)


def test_custom_provider_section(home: Path) -> None:
    """A named OpenAI-compatible server: no key needed, first model is the default."""
    write_trusted(
        home,
        home / "repo" / ".agentd.toml",
        '[providers.local]\napi = "openai"\nbase_url = "http://localhost:11434/v1"\n'
        'models = ["llama3", "qwen3"]\ncontext_window = 8192\n',
    )
    env = env_for(home)
    config = load_config(home / "repo", env=env)
    choice = resolve_model(config, None, None, env=env)
    assert (choice.provider, choice.model, choice.api_key) == ("local", "llama3", None)
    assert choice.context_window == 8192
    assert choice.price is None
    models = [(m.provider, m.model) for m in list_models(config, env=env)]
    assert models == [("local", "llama3"), ("local", "qwen3"), ("mock", "mock-model")]


def test_named_key_variable_must_be_set(home: Path) -> None:
    """``api_key_env`` names the variable; unset, it is an error naming it."""
    write_trusted(
        home,
        home / "repo" / ".agentd.toml",
        '[providers.corp]\nbase_url = "https://llm.corp.test/v1"\n'
        'api_key_env = "CORP_LLM_KEY"\nmodels = ["m"]\n',
    )
    config = load_config(home / "repo", env=env_for(home))
    with pytest.raises(ConfigError, match=r"\$CORP_LLM_KEY"):
        resolve_model(config, "corp", None, env=env_for(home))
    choice = resolve_model(config, "corp", None, env=env_for(home, CORP_LLM_KEY="k"))
    assert choice.api_key == "k"
    assert "CORP_LLM_KEY" in credential_env_names({"CORP_LLM_KEY": "k"}, config)


@pytest.mark.parametrize(
    ("provider", "extra", "endpoint"),
    [
        ("openai", {"OPENAI_API_KEY": "sk-abc"}, "https://api.openai.com/v1"),
        (
            "openai",
            {"LLM_BASE_URL": "http://gw.test/v1", "LLM_AUTH_TOKEN": "t"},
            "http://gw.test/v1",
        ),
        ("anthropic", {"ANTHROPIC_API_KEY": "ak"}, "https://api.anthropic.com"),
        ("corp", {"CORP_LLM_KEY": "k"}, "https://llm.corp.test/v1"),
    ],
)
def test_a_key_goes_only_to_the_endpoint_it_is_paired_with(
    home: Path, provider: str, extra: dict[str, str], endpoint: str
) -> None:
    """An explicit base URL other than the key's own endpoint gets no key (the same one does)."""
    write_trusted(
        home,
        home / "repo" / ".agentd.toml",
        '[providers.corp]\nbase_url = "https://llm.corp.test/v1"\n'
        'api_key_env = "CORP_LLM_KEY"\nmodels = ["m"]\n',
    )
    env = env_for(home, **extra)
    config = load_config(home / "repo", env=env)
    key = next(iter(extra.values())) if len(extra) == 1 else extra["LLM_AUTH_TOKEN"]
    assert resolve_model(config, provider, "m", env=env).api_key == key
    assert resolve_model(config, provider, "m", endpoint + "/", env=env).api_key == key
    elsewhere = resolve_model(config, provider, "m", "http://elsewhere.test/v1", env=env)
    assert (elsewhere.base_url, elsewhere.api_key) == ("http://elsewhere.test/v1", None)


def test_official_endpoint_without_key(home: Path) -> None:
    """Choosing openai explicitly without a key says which variable to set."""
    env = env_for(home)
    with pytest.raises(ConfigError, match=r"\$OPENAI_API_KEY"):
        resolve_model(load_config(home, env=env), "openai", None, env=env)


def test_unknown_provider(home: Path) -> None:
    """An unknown provider name lists the known ones."""
    env = env_for(home)
    with pytest.raises(
        ConfigError, match="unknown provider 'nope'; known providers: anthropic, mock, openai"
    ):
        resolve_model(load_config(home, env=env), "nope", None, env=env)


def test_mock_needs_no_configuration(home: Path) -> None:
    """``mock`` resolves without files or keys; its URL is the given one or the in-process
    mock's."""
    env = env_for(home)
    config = load_config(home, env=env)
    choice = resolve_model(config, "mock", None, env=env)
    assert (choice.provider, choice.api, choice.model, choice.base_url) == (
        "mock",
        "openai",
        "mock-model",
        MOCK_BASE_URL,
    )
    given = resolve_model(config, "mock", None, "http://127.0.0.1:9/v1", env=env)
    assert given.base_url == "http://127.0.0.1:9/v1"


def test_bad_files_are_clear_errors(home: Path) -> None:
    """TOML syntax errors and wrong types name the file (and the setting)."""
    env = env_for(home)
    project = write_trusted(home, home / "repo" / ".agentd.toml", "model = \n")
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load_config(home / "repo", env=env)
    write(project, 'max_turns = "many"\n')
    with pytest.raises(ConfigError, match=r"key max_turns: Expected `int`"):
        load_config(home / "repo", env=env)
    write(project, '[providers.x]\nbase-url = "typo"\n')
    with pytest.raises(ConfigError, match="base-url"):
        load_config(home / "repo", env=env)
    write(project, 'permission_mode = "yolo"\n')
    with pytest.raises(ConfigError, match="permission_mode"):
        load_config(home / "repo", env=env)


def test_system_prompt_file_and_raw_sections(home: Path) -> None:
    """system_prompt_file is relative to its file; tables are merged key by key."""
    write(home / "xdg" / "agentd" / "prompt.md", "Be brief.")
    write(
        home / "xdg" / "agentd" / "config.toml",
        'system_prompt_file = "prompt.md"\n[tools]\nbash_timeout = 30\n'
        '[permissions]\nallow = ["read"]\n',
    )
    env = env_for(home)
    config = load_config(home, env=env)
    assert config.system_prompt == "Be brief."
    assert config.raw["tools"] == {"bash_timeout": 30}
    assert config.raw["permissions"] == {"allow": ["read"]}
    write_trusted(
        home,
        home / "repo" / ".agentd.toml",
        'system_prompt = "Project rules."\n[tools]\nmax_output_lines = 9\n',
    )
    project = load_config(home / "repo", env=env)
    assert project.system_prompt == "Project rules."
    assert project.raw["tools"] == {"bash_timeout": 30, "max_output_lines": 9}
    assert project.settings.tools.max_output_lines == 9


def test_missing_prompt_file(home: Path) -> None:
    """A system_prompt_file that does not exist is an error naming it."""
    write(home / "xdg" / "agentd" / "config.toml", 'system_prompt_file = "nope.md"\n')
    with pytest.raises(ConfigError, match=r"nope\.md"):
        load_config(home, env=env_for(home))


def test_price_overrides(home: Path) -> None:
    """``[prices."model"]`` adds or replaces a price; the choice carries it."""
    write(
        home / "xdg" / "agentd" / "config.toml",
        'provider = "openai"\nmodel = "gpt-4o"\n'
        '[prices."gpt-4o"]\ninput = 1\noutput = 2\ncache_read = 0.5\n'
        '[prices."house-model"]\ninput = 0.1\noutput = 0.2\n',
    )
    env = env_for(home, OPENAI_API_KEY="sk-1")
    config = load_config(home, env=env)
    assert resolve_model(config, None, None, env=env).price == Price(1.0, 2.0, cache_read=0.5)
    assert resolve_model(config, None, "house-model", env=env).price == Price(0.1, 0.2)
    assert resolve_model(config, None, "gpt-4o-mini", env=env).price == Price(
        0.15, 0.60, cache_read=0.075
    )


def test_several_providers_need_a_default(home: Path) -> None:
    """Two configured providers and no ``provider =``: an error asking to choose."""
    write_trusted(
        home,
        home / "repo" / ".agentd.toml",
        '[providers.a]\nbase_url = "http://a.test/v1"\nmodels = ["x"]\n'
        '[providers.b]\nbase_url = "http://b.test/v1"\nmodels = ["y"]\n',
    )
    env = env_for(home)
    config = load_config(home / "repo", env=env)
    with pytest.raises(ConfigError, match="several providers"):
        resolve_model(config, None, None, env=env)
    assert resolve_model(config, "b", None, env=env).model == "y"


def test_list_models_includes_env_providers(home: Path) -> None:
    """Built-in providers with credentials appear with their default models."""
    env = env_for(home, OPENAI_API_KEY="sk-1", ANTHROPIC_API_KEY="sk-ant-1")
    models = list_models(load_config(home, env=env), env=env)
    assert [(m.provider, m.model) for m in models] == [
        ("openai", "gpt-4o-mini"),
        ("anthropic", "claude-sonnet-4-5"),
        ("mock", "mock-model"),
    ]


def test_credential_env_names() -> None:
    """Secrets are found by name and by value; ordinary variables are left alone."""
    env = {
        "OPENAI_API_KEY": "x",
        "LLM_AUTH_TOKEN": "x",
        "GITHUB_TOKEN": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "DB_PASSWORD": "x",
        "MY_SECRET": "x",
        "STRIPE_KEY": "x",
        "HIDDEN": "sk-ant-api03-abc",
        "PATH": "/usr/bin",
        "HOME": "/root",
        "TOKENIZERS_PARALLELISM": "false",
        "SSH_AUTH_SOCK": "/tmp/agent",
        "KEYBOARD": "us",
    }
    assert credential_env_names(env) == {
        "OPENAI_API_KEY",
        "LLM_AUTH_TOKEN",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "MY_SECRET",
        "STRIPE_KEY",
        "HIDDEN",
    }


def test_no_provider_hint_names_only_what_works_and_the_untrusted_file(home: Path) -> None:
    """An untrusted project file that sets the provider: the error names it and the command
    that trusts its folder, carries its path for a client's trust offer, and offers a project
    file only for a trusted folder."""
    env = env_for(home)
    project = home / "other"
    (project / ".git").mkdir(parents=True)
    write(project / ".agentd.toml", 'provider = "anthropic"\nmodel = "claude-sonnet-4-5"\n')
    config = load_config(project, env=env)
    with pytest.raises(ConfigError) as caught:
        resolve_model(config, None, None, env=env)
    message = caught.value.message
    assert f"agentctl trust {project}" in message
    assert str(project / ".agentd.toml") in message
    assert caught.value.data == {"untrustedConfig": str(project / ".agentd.toml")}
    assert "or .agentd.toml in the project" not in message
    assert "once you trust its folder" in message
