"""Instruction files a repository controls are read without blocking and capped
(:mod:`agentd.config.textfile`), on real FIFOs, devices and files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentd.agent.prompt import build_system_prompt
from agentd.config.load import load_config
from agentd.config.textfile import MAX_TEXT_BYTES, NotRegularFile, read_capped_text
from agentd.errors import ConfigError


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda p: os.mkfifo(p), "a FIFO"),
        (lambda p: p.mkdir(), "a directory"),
        (lambda p: p.symlink_to("/dev/zero"), "a character device"),
    ],
    ids=["fifo", "directory", "device"],
)
def test_anything_but_a_regular_file_is_refused_at_once(
    tmp_path: Path, make: object, kind: str
) -> None:
    path = tmp_path / "prompt.md"
    make(path)  # type: ignore[operator]
    with pytest.raises(NotRegularFile, match=f"is not a regular file \\({kind}\\)"):
        read_capped_text(path)


def test_a_long_file_is_cut_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "prompt.md"
    path.write_bytes(b"x" * (MAX_TEXT_BYTES * 3))
    text = read_capped_text(path)
    assert text == "x" * MAX_TEXT_BYTES + "\n[… prompt.md truncated at 64 KB]"
    path.write_bytes(b"y" * MAX_TEXT_BYTES)
    assert read_capped_text(path) == "y" * MAX_TEXT_BYTES


def test_the_config_names_a_fifo_prompt_file(tmp_path: Path) -> None:
    """An untrusted project's FIFO is a ConfigError naming it, not a hang."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / ".agentd.toml").write_text('system_prompt_file = "p"\n')
    os.mkfifo(tmp_path / "repo" / "p")
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    with pytest.raises(ConfigError, match=r"system_prompt_file: .*/repo/p is not a regular file"):
        load_config(tmp_path / "repo", env=env)


def test_an_agents_md_fifo_is_skipped(tmp_path: Path) -> None:
    """An AGENTS.md that is a FIFO is skipped, not waited on."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "CLAUDE.md").write_text("Use tabs.\n")
    os.mkfifo(tmp_path / "AGENTS.md")
    prompt = build_system_prompt(tmp_path, [])
    assert "Use tabs." in prompt
    assert "AGENTS.md" not in prompt
