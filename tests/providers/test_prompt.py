"""The system prompt: instructions, tools, environment and project context files."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from agentd.agent.prompt import DEFAULT_INSTRUCTIONS, build_system_prompt, context_files
from agentd.toolspec import ToolSpec

TOOLS = [
    ToolSpec("read", "Read a file.\nLonger details.", {}),
    ToolSpec("bash", "Run a shell command.", {}),
]
NOW = datetime(2031, 5, 17, 12, 0)


def make_repo(root: Path) -> Path:
    """root/AGENTS.md (outside), root/repo/{.git, AGENTS.md, CLAUDE.md}, root/repo/pkg/AGENTS.md."""
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg").mkdir()
    (root / "AGENTS.md").write_text("OUTSIDE the repository")
    (repo / "AGENTS.md").write_text("Repo rule: run make test.")
    (repo / "CLAUDE.md").write_text("Repo rule two.")
    (repo / "pkg" / "AGENTS.md").write_text("Package rule: no globals.")
    return repo


def test_default_prompt_has_guidance_tools_and_environment(tmp_path: Path) -> None:
    """Built-in instructions, one line per tool, cwd, platform and date."""
    prompt = build_system_prompt(tmp_path, TOOLS, now=NOW)
    assert prompt.startswith(DEFAULT_INSTRUCTIONS)
    for phrase in (
        "Read a file before editing",
        "occurs only once",
        "run the tests",
        "without asking",
    ):
        assert phrase in prompt
    assert "- read: Read a file.\n" in prompt
    assert "Longer details" not in prompt
    assert f"Working directory: {tmp_path}" in prompt
    assert "Date: 2031-05-17" in prompt
    assert "Platform: " in prompt


def test_context_files_from_repo_root_down_to_cwd(tmp_path: Path) -> None:
    """AGENTS.md and CLAUDE.md up to the repository root, outermost first, none above it."""
    repo = make_repo(tmp_path)
    cwd = repo / "pkg"
    assert context_files(cwd) == [repo / "AGENTS.md", repo / "CLAUDE.md", cwd / "AGENTS.md"]
    prompt = build_system_prompt(cwd, TOOLS, now=NOW)
    assert "OUTSIDE" not in prompt
    first = prompt.index("Repo rule: run make test.")
    assert first < prompt.index("Repo rule two.") < prompt.index("Package rule: no globals.")
    assert f"## {cwd / 'AGENTS.md'}" in prompt


def test_override_replaces_the_instructions_but_keeps_context(tmp_path: Path) -> None:
    """An override takes the place of the built-in text; environment and context remain."""
    repo = make_repo(tmp_path)
    prompt = build_system_prompt(repo, TOOLS, override="You are a release bot.", now=NOW)
    assert prompt.startswith("You are a release bot.")
    assert DEFAULT_INSTRUCTIONS not in prompt
    assert "Repo rule: run make test." in prompt
    assert "Date: 2031-05-17" in prompt


def test_large_context_file_is_capped(tmp_path: Path) -> None:
    """A huge AGENTS.md is cut at 64 KB with a notice."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("x" * 200_000)
    prompt = build_system_prompt(tmp_path, [], now=NOW)
    assert "truncated at 64 KB" in prompt
    assert len(prompt) < 70_000
