"""Fixtures for the tool tests: real directories under /tmp and a session context."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentd.tools import build_tools, run_tool
from agentd.tools.base import ToolContext, ToolResult


@pytest.fixture
def work() -> Iterator[Path]:
    """A fresh, short, real directory (resolved, so symlinked /tmp does not matter)."""
    path = Path(tempfile.mkdtemp(prefix="agentd-t-", dir="/tmp")).resolve()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def ctx(work: Path) -> ToolContext:
    """A session context whose cwd is ``work`` and whose spill files stay in it."""
    return ToolContext(cwd=work, session_id="test", spill_dir=work / ".spill")


async def call(name: str, ctx: ToolContext, **args: Any) -> ToolResult:
    """Run tool ``name`` the way the agent loop does (validation and error mapping included)."""
    tool = build_tools([name])[name]
    return await run_tool(tool, args, ctx)


def text_of(result: ToolResult) -> str:
    """The text a result shows the model."""
    assert isinstance(result.output, str), result.output
    return result.output
