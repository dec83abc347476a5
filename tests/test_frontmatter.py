"""One front matter grammar for agent profiles and custom commands (real files in a tmp
folder, read by each one's parser): the same block means the same values in both."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.config.agents import parse_profile
from agentd.config.commands import parse_command
from agentd.config.frontmatter import parse_front_matter

BLOCK = """---
description: "Reviews # every line"   # quoted: the '#' inside is kept
model: mock/mock-model  # a comment after an unquoted value
---
Review $ARGUMENTS.
"""


def test_a_profile_and_a_command_read_the_same_block_alike(tmp_path: Path) -> None:
    profile_file = tmp_path / "reviewer.md"
    profile_file.write_text(BLOCK)
    command_file = tmp_path / "review.md"
    command_file.write_text(BLOCK)
    profile = parse_profile(profile_file)
    command = parse_command(command_file, "user")
    assert profile.description == command.description == "Reviews # every line"
    assert profile.model == command.model == "mock/mock-model"
    assert profile.prompt == command.body == "Review $ARGUMENTS."


def test_lists_keys_and_strictness() -> None:
    text = (
        "---\nTools: [read, 'grep']\n  - find\nextra_key: kept\ncolor: blue\nnot a pair\n---\nbody"
    )
    fields, body = parse_front_matter(text, lists=("tools",))
    assert fields == {"tools": ["read", "grep", "find"], "extra-key": "kept", "color": "blue"}
    assert body == "body"
    with pytest.raises(ValueError, match="unknown front matter key 'color'"):
        parse_front_matter("---\ncolor: blue\n---\n", keys=("model",))
    with pytest.raises(ValueError, match="line 2 of its front matter is not `key: value`"):
        parse_front_matter("---\nnot a pair\n---\n", keys=("model",))
    with pytest.raises(ValueError, match="not closed"):
        parse_front_matter("---\nmodel: x\n")
    assert parse_front_matter("no block") == ({}, "no block")
    with pytest.raises(ValueError, match="no front matter"):
        parse_front_matter("no block", required=True)
