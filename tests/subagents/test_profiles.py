"""Agent profiles: built-ins, user and project Markdown files, trust, bad files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentd.config.agents import load_profiles, parse_profile
from agentd.protocol.trust_list import add_trusted
from tests.harness import IsolatedHome


@pytest.fixture
def box() -> IsolatedHome:
    with IsolatedHome() as home:
        yield home


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_built_in_profiles(box: IsolatedHome) -> None:
    profiles, warnings = load_profiles(box.project, box.env)
    assert list(profiles) == ["general", "explore"]
    assert profiles["general"].tools is None
    assert profiles["explore"].tools == ("read", "grep", "find", "ls")
    assert warnings == []


def test_front_matter_forms(tmp_path: Path) -> None:
    comma = write(tmp_path, "a.md", "---\nname: a\ndescription: A.\ntools: read, grep\n---\nBody\n")
    listed = write(
        tmp_path,
        "b.md",
        '---\ndescription: "B, quoted."\ntools:\n  - read\n  - ls\nmodel: mock/other\n---\n',
    )
    bracket = write(
        tmp_path, "c.md", "---\nname: c\ndescription: C.\ntools: [find]  # a comment\n---\n"
    )
    assert parse_profile(comma).tools == ("read", "grep")
    assert parse_profile(comma).prompt == "Body"
    b = parse_profile(listed)
    assert (b.name, b.description, b.tools, b.model) == (
        "b",
        "B, quoted.",
        ("read", "ls"),
        "mock/other",
    )
    assert parse_profile(bracket).tools == ("find",)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("no front matter\n", "no front matter"),
        ("---\nname: x\ndescription: y\n", "not closed"),
        ("---\nname: x\n---\n", "no description"),
        ("---\nname: ../x\ndescription: y\n---\n", "bad name"),
    ],
)
def test_bad_profiles_say_why(tmp_path: Path, text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_profile(write(tmp_path, "bad.md", text))


def test_user_profiles_and_a_trusted_projects_win_in_order(box: IsolatedHome) -> None:
    user = box.config_dir / "agentd" / "agents"
    write(user, "reviewer.md", "---\nname: reviewer\ndescription: From the user.\n---\n")
    write(user, "explore.md", "---\nname: explore\ndescription: User explore.\n---\n")
    write(user, "broken.md", "nothing\n")
    project = box.project / ".agentd" / "agents"
    write(project, "reviewer.md", "---\nname: reviewer\ndescription: From the project.\n---\n")
    profiles, warnings = load_profiles(box.project, box.env)
    assert profiles["reviewer"].description == "From the user."  # untrusted project: ignored
    assert profiles["explore"].description == "User explore."
    assert any("broken.md" in w for w in warnings)
    assert any("not trusted" in w for w in warnings)
    add_trusted(box.project, box.env)
    profiles, warnings = load_profiles(box.project, box.env)
    assert profiles["reviewer"].description == "From the project."
    assert not any("not trusted" in w for w in warnings)


@pytest.mark.parametrize(
    "make",
    [lambda p: os.mkfifo(p), lambda p: p.symlink_to("/dev/zero")],
    ids=["fifo", "device"],
)
def test_a_profile_that_is_not_a_regular_file_is_skipped_at_once(
    box: IsolatedHome, make: Any
) -> None:
    user = box.config_dir / "agentd" / "agents"
    user.mkdir(parents=True)
    make(user / "trap.md")
    write(user, "fine.md", "---\nname: fine\ndescription: Fine.\n---\n")
    profiles, warnings = load_profiles(box.project, box.env)
    assert "fine" in profiles
    assert any("trap.md" in w and "not a regular file" in w for w in warnings)


def test_a_profile_over_the_cap_is_skipped(tmp_path: Path) -> None:
    big = write(tmp_path, "big.md", "---\nname: big\ndescription: B.\n---\n" + "x" * 70_000)
    with pytest.raises(ValueError, match="larger than 64 KB"):
        parse_profile(big)
