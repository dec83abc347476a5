"""The user's ``[[project_rules]]``: read for a folder and the folders below it, from the
user's own config only, and appended by an "always in this project" answer without touching
what the file already says (real files in a temporary home)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.config.load import load_config
from agentd.config.project_rules import project_rules, save_project_rules
from agentd.errors import ConfigError


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }


def test_saved_rules_apply_to_the_folder_and_below_only(tmp_path: Path) -> None:
    config = tmp_path / "config" / "agentd" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('# mine\nmodel = "m"\n[permissions]\nallow = ["read"]')
    project = tmp_path / "app"
    (project / "src").mkdir(parents=True)
    save_project_rules(config, project, ["bash(npm test:*)", 'bash(say "hi":*)'])
    text = config.read_text()
    assert text.startswith('# mine\nmodel = "m"\n[permissions]\nallow = ["read"]\n')
    env = _env(tmp_path)
    settings = load_config(project / "src", env=env).settings
    assert settings.permissions.allow == ["read"]
    assert project_rules(settings, project / "src") == (
        ["bash(npm test:*)", 'bash(say "hi":*)'],
        [],
    )
    assert project_rules(settings, project) == project_rules(settings, project / "src")
    assert project_rules(settings, tmp_path / "other") == ([], [])
    assert project_rules(settings, tmp_path / "app-2") == ([], [])
    save_project_rules(config, project, ["edit"])  # a second table for the same folder
    settings = load_config(project, env=env).settings
    assert project_rules(settings, project)[0] == ["bash(npm test:*)", 'bash(say "hi":*)', "edit"]
    assert config.stat().st_mode & 0o777 != 0  # kept as the user had it


def test_a_new_config_file_is_private(tmp_path: Path) -> None:
    config = tmp_path / "config" / "agentd" / "config.toml"
    save_project_rules(config, tmp_path, ["edit"])
    assert config.stat().st_mode & 0o777 == 0o600
    assert config.parent.stat().st_mode & 0o777 == 0o700


def test_a_broken_config_is_left_alone(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("model = \n")
    with pytest.raises(ConfigError, match="not saved"):
        save_project_rules(config, tmp_path, ["edit"])
    assert config.read_text() == "model = \n"
    config.write_text("[project_rules]\nfolder = 'x'\n")
    with pytest.raises(ConfigError, match="not an array of tables"):
        save_project_rules(config, tmp_path, ["edit"])


def test_a_project_file_cannot_set_project_rules(tmp_path: Path) -> None:
    project = tmp_path / "app"
    project.mkdir()
    (project / ".agentd.toml").write_text(
        f'[[project_rules]]\nfolder = "{project}"\nallow = ["bash"]\n'
    )
    settings = load_config(project, env=_env(tmp_path)).settings
    assert project_rules(settings, project) == ([], [])
