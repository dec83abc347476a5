"""The [tools] table: validation, settings reaching the tools, limits in the descriptions."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentd.tools import TOOLS, tool_spec
from agentd.tools.base import ToolContext
from agentd.tools.defaults import ToolSettings
from agentd.tools.settings import tool_settings
from tests.tools.conftest import call, text_of


def test_set_keys_override_the_defaults() -> None:
    assert tool_settings(None) == ToolSettings()
    section = {"max_output_lines": 300, "bash_max_timeout": 30, "pass_env": ["GH_TOKEN"]}
    settings = tool_settings(section)
    assert settings == ToolSettings(
        max_output_lines=300, bash_max_timeout=30, pass_env=["GH_TOKEN"]
    )
    assert (settings.bash_timeout, settings.grep_backend) == (120.0, "auto")


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"max_output_line": 3}, "max_output_line"),
        ({"bash_timeout": 0}, "bash_timeout"),
        ({"max_output_bytes": "big"}, "max_output_bytes"),
        ({"grep_backend": "ag"}, "grep_backend"),
        ({"secret_env": "X"}, "secret_env"),
    ],
)
def test_bad_values_name_the_key(section: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tool_settings(section)


def test_descriptions_state_the_default_limits() -> None:
    bash = tool_spec(TOOLS["bash"]).description
    assert "Default timeout 120 s (max 600 s)" in bash
    assert "2000 lines or 50 KB" in bash
    assert "At most 2000 lines or 50 KB per call" in tool_spec(TOOLS["read"]).description
    assert "at most 1000 paths" in tool_spec(TOOLS["find"]).description
    assert "At most 500 entries" in tool_spec(TOOLS["ls"]).description
    assert "{old_string, new_string, replace_all}" in tool_spec(TOOLS["edit"]).description
    for tool in TOOLS.values():
        assert not re.search(r"\{(max|bash|find|ls|undo|grep)_\w*\}", tool_spec(tool).description)


def test_descriptions_state_the_configured_limits() -> None:
    settings = tool_settings(
        {"bash_timeout": 300, "bash_max_timeout": 60, "max_output_lines": 400,
         "max_output_bytes": 20480, "find_max_results": 50, "undo_max_per_file": 3}
    )  # fmt: skip
    assert "Default timeout 60 s (max 60 s)" in tool_spec(TOOLS["bash"], settings).description
    assert "400 lines or 20 KB" in tool_spec(TOOLS["read"], settings).description
    assert "at most 50 paths" in tool_spec(TOOLS["find"], settings).description
    assert "up to 3 steps" in tool_spec(TOOLS["undo_edit"], settings).description


def test_grep_description_names_the_engine_in_use() -> None:
    rg = tool_spec(TOOLS["grep"], ToolSettings(grep_backend="rg")).description
    python = tool_spec(TOOLS["grep"], ToolSettings(grep_backend="python")).description
    assert "ripgrep (Rust regex): look-around" in rg
    assert "Python's `re`: look-around and backreferences work" in python
    assert "`\\p{...}`" in python


@pytest.mark.parametrize(
    ("backend", "pattern"),
    [("rg", "foo(?=bar)"), ("rg", r"(a)\1"), ("python", r"\p{Greek}"), ("python", r"x\z")],
)
async def test_the_refused_syntax_is_an_error_result(
    ctx: ToolContext, backend: str, pattern: str
) -> None:
    """What each engine's description says it refuses really is refused, never ignored."""
    (ctx.cwd / "a.txt").write_text("foobar aa αβ x\n")
    ctx.settings.grep_backend = backend  # type: ignore[assignment]
    result = await call("grep", ctx, pattern=pattern)
    assert result.is_error
    assert "regex" in text_of(result).lower()


async def test_configured_output_limit_applies(ctx: ToolContext) -> None:
    ctx.settings = tool_settings({"max_output_lines": 5})
    result = await call("bash", ctx, command="seq 1 10")
    assert text_of(result).splitlines()[0] == "6"
    assert result.details.truncated is True
