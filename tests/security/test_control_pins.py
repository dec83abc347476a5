"""Pins of control paths on real files: a folder's trust covers its ``.agentd.toml``,
``.mcp.json`` and ``.agentd/`` folders, their absence included; a FIFO never blocks a check;
what cannot be pinned is never trusted."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agentd.config.trust import checked_folder
from agentd.protocol.control_pins import MAX_TREE_FILES, read_control
from agentd.protocol.trust_list import (
    add_trusted,
    content_pin,
    control_trust,
    file_trust,
    pinned_paths,
    remove_trusted,
)
from tests.harness import scaled


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    (folder / ".git").mkdir(parents=True)
    (folder / ".mcp.json").write_text('{"mcpServers": {}}')
    (folder / ".agentd" / "commands").mkdir(parents=True)
    (folder / ".agentd" / "commands" / "review.md").write_text("Review $1")
    return folder


def state(path: Path, env: dict[str, str]) -> str:
    snapshot = read_control(path)
    return control_trust(path, snapshot.pin if snapshot else None, env)


def test_trust_pins_every_existing_control_path(project: Path, env: dict[str, str]) -> None:
    add_trusted(project, env)
    assert set(pinned_paths(project, env)) == {
        str(project / ".mcp.json"),
        str(project / ".agentd" / "commands"),
    }
    assert state(project / ".mcp.json", env) == "trusted"
    assert state(project / ".agentd" / "commands", env) == "trusted"


def test_a_control_path_that_appears_later_is_not_trusted(
    project: Path, env: dict[str, str]
) -> None:
    add_trusted(project, env)
    (project / ".agentd" / "agents").mkdir()
    (project / ".agentd" / "agents" / "x.md").write_text("---\nname: x\n---\n")
    (project / ".agentd" / "skills").mkdir()
    (project / ".agentd.toml").write_text("max_turns = 3\n")
    for name in (".agentd/agents", ".agentd/skills"):
        assert state(project / name, env) == "changed"
    data = (project / ".agentd.toml").read_bytes()
    assert file_trust(project / ".agentd.toml", data, env) == "changed"
    sub = project / "sub"
    (sub / ".agentd" / "commands").mkdir(parents=True)
    assert state(sub / ".agentd" / "commands", env) == "changed"  # a subfolder's, too


@pytest.mark.parametrize(
    "change",
    ["add a file", "edit a file", "rename a file", "add a symlink", "add a subfolder"],
)
def test_any_change_of_a_control_folder_breaks_its_pin(
    project: Path, env: dict[str, str], change: str
) -> None:
    add_trusted(project, env)
    folder = project / ".agentd" / "commands"
    if change == "add a file":
        (folder / "deploy.md").write_text("Deploy")
    elif change == "edit a file":
        (folder / "review.md").write_text("Review $1 and run curl")
    elif change == "rename a file":
        (folder / "review.md").rename(folder / "reveiw.md")
    elif change == "add a symlink":
        (folder / "link.md").symlink_to(folder / "review.md")
    else:
        (folder / "more").mkdir()
    trusted, snapshot = checked_folder(folder, env)
    assert trusted == "changed"
    assert snapshot is not None


def test_untrusted_folder_and_revoke(project: Path, env: dict[str, str]) -> None:
    assert state(project / ".mcp.json", env) == "untrusted"
    add_trusted(project, env)
    assert remove_trusted(project, env)
    assert pinned_paths(project, env) == {}
    assert state(project / ".agentd" / "commands", env) == "untrusted"


def test_retrusting_forgets_the_pin_of_a_removed_file(project: Path, env: dict[str, str]) -> None:
    add_trusted(project, env)
    old = (project / ".mcp.json").read_bytes()
    (project / ".mcp.json").unlink()
    add_trusted(project, env)
    assert str(project / ".mcp.json") not in pinned_paths(project, env)
    (project / ".mcp.json").write_bytes(old)  # the same bytes, back later: not trusted
    assert file_trust(project / ".mcp.json", old, env) == "changed"


def test_a_fifo_in_a_control_folder_never_blocks(project: Path, env: dict[str, str]) -> None:
    add_trusted(project, env)
    os.mkfifo(project / ".agentd" / "commands" / "stall.md")
    done = threading.Event()
    result: list[str] = []

    def check() -> None:
        result.append(state(project / ".agentd" / "commands", env))
        done.set()

    threading.Thread(target=check, daemon=True).start()
    assert done.wait(scaled(10)), "the check blocked on a FIFO"
    assert result == ["changed"]  # not trusted: it was never pinned with the FIFO


def test_a_tree_too_large_to_pin_is_never_trusted(project: Path, env: dict[str, str]) -> None:
    folder = project / ".agentd" / "skills"
    folder.mkdir()
    for index in range(MAX_TREE_FILES + 1):
        (folder / f"{index}.md").write_text("x")
    add_trusted(project, env)
    snapshot = read_control(folder)
    assert snapshot is not None
    assert snapshot.pin is None
    assert "more than" in (snapshot.problem or "")
    assert state(folder, env) == "changed"


def test_a_file_pin_is_its_content_hash(project: Path) -> None:
    snapshot = read_control(project / ".mcp.json")
    assert snapshot is not None
    assert snapshot.pin == content_pin(b'{"mcpServers": {}}')
    assert snapshot.files == {"": b'{"mcpServers": {}}'}


def test_a_symlinked_control_path_is_pinned_by_its_content(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """A ``.mcp.json`` that is a link (to a shared file) is trusted by what it holds; the
    target changing breaks the pin."""
    shared = tmp_path / "shared.json"
    shared.write_text('{"mcpServers": {}}')
    (project / ".mcp.json").unlink()
    (project / ".mcp.json").symlink_to(shared)
    add_trusted(project, env)
    assert state(project / ".mcp.json", env) == "trusted"
    shared.write_text('{"mcpServers": {"x": {"command": "evil"}}}')
    assert state(project / ".mcp.json", env) == "changed"
