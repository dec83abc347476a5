"""The tool catalog: a session's tool list without importing the tools, the same specs as
the tool classes give, and each implementation imported on its tool's first use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentd.tools import TOOLS, build_tools, run_tool, tool_spec
from agentd.tools.base import ToolContext
from agentd.tools.catalog import IMPLEMENTATIONS, LazyTool, implementation
from agentd.tools.defaults import ToolSettings, WebSearchSettings

COLD = """
import sys
from agentd.tools import IMPLEMENTATIONS, build_tools, toolset
tools = build_tools()
specs = toolset(tools).specs
modules = {target.partition(":")[0] for target in IMPLEMENTATIONS.values()}
print(len(specs), " ".join(sorted(modules & set(sys.modules))))
"""


@pytest.mark.parametrize("name", list(IMPLEMENTATIONS))
def test_the_catalog_gives_the_classes_specs(name: str) -> None:
    settings = ToolSettings(
        web_search=WebSearchSettings(backend="provider", url="", max_uses=3),
        agent_profiles="- general: x",
    )
    lazy, real = TOOLS[name], implementation(IMPLEMENTATIONS[name])
    assert issubclass(lazy, LazyTool)
    for chosen in (None, settings):
        assert tool_spec(lazy, chosen) == tool_spec(real, chosen)
        assert tool_spec(lazy(), chosen) == tool_spec(real(), chosen)
    assert (lazy.kind, lazy.mutating, lazy.Params) == (real.kind, real.mutating, real.Params)


def test_a_sessions_tool_list_imports_no_tool() -> None:
    found = subprocess.run(
        [sys.executable, "-c", COLD], capture_output=True, text=True, check=True
    ).stdout.split()
    assert found[0] == str(len(build_tools()))
    held = set(found[1:])
    assert not held - {"agentd.tools.grep", "agentd.tools.skill"}, held  # settings, the loop


async def test_a_tool_is_imported_on_its_first_call(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    tool = build_tools(["read"])["read"]
    result = await run_tool(tool, {"path": "a.txt"}, ToolContext(tmp_path))
    assert not result.is_error
    assert "one" in str(result.output)
    assert "agentd.tools.read" in sys.modules
    assert getattr(tool, "no_such_attribute", None) is None
