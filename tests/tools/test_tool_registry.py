"""The registry: specs the LLM sees, building tool sets, and run_tool's error mapping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest

from agentd.protocol.events import Location, ToolKind
from agentd.tools import (
    CONFIGURED_TOOLS,
    DEFAULT_TOOLS,
    READ_ONLY,
    TOOLS,
    build_tools,
    run_tool,
    tool_spec,
)
from agentd.tools.base import ToolContext, ToolError, ToolResult
from tests.tools.conftest import text_of


def walk(node: Any) -> list[Any]:
    """Every nested value of a JSON document."""
    if isinstance(node, dict):
        return [node, *(x for v in node.values() for x in walk(v))]
    if isinstance(node, list):
        return [node, *(x for v in node for x in walk(v))]
    return [node]


@pytest.mark.parametrize("name", list(TOOLS))
def test_spec_is_a_self_contained_object_schema(name: str) -> None:
    spec = tool_spec(TOOLS[name])
    assert spec.name == name
    assert spec.description
    schema = spec.parameters
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    text = json.dumps(schema)
    assert "$ref" not in text
    assert "$defs" not in text
    assert "title" not in schema
    for node in walk(schema):
        if isinstance(node, dict) and "anyOf" in node:
            assert {"type": "null"} not in node["anyOf"]
    for prop in schema["properties"].values():
        assert prop.get("description"), (name, prop)
    assert all(key == key.lower() for key in schema["properties"])


def test_spec_details() -> None:
    read = tool_spec(TOOLS["read"]).parameters
    assert read["required"] == ["path"]
    assert read["properties"]["offset"] == {
        "description": "1-based line number to start at (default 1).",
        "type": "integer",
        "minimum": 1,
    }
    edit = tool_spec(TOOLS["edit"]).parameters
    item = edit["properties"]["edits"]["items"]
    assert item["type"] == "object"
    assert item["required"] == ["old_string", "new_string"]
    grep = tool_spec(TOOLS["grep"]).parameters
    assert grep["properties"]["output_mode"]["enum"] == ["content", "count", "files"]


def test_tool_sets() -> None:
    assert set(READ_ONLY) <= set(TOOLS)
    assert tuple(n for n in TOOLS if n not in CONFIGURED_TOOLS) == DEFAULT_TOOLS
    assert list(build_tools()) == list(DEFAULT_TOOLS)
    chosen = build_tools(["ls", "read"])
    assert list(chosen) == ["ls", "read"]
    assert all(not t.mutating for t in build_tools(READ_ONLY).values())
    assert {n for n, t in build_tools().items() if t.mutating} == {
        "write",
        "edit",
        "notebook_edit",
        "undo_edit",
        "bash",
    }


def test_unknown_tool_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"Unknown tool\(s\): nope\. Valid tools: read, write"):
        build_tools(["read", "nope"])


async def test_run_tool_validation_error_has_schema_hint(ctx: ToolContext) -> None:
    tool = build_tools(["read"])["read"]
    result = await run_tool(tool, {"path": 3}, ctx)
    assert result.is_error
    assert text_of(result) == (
        "Invalid arguments for read: Expected `str`, got `int` - at `$.path`. "
        "Expected read(path: string, offset?: integer, limit?: integer, pages?: string)."
    )
    unknown = await run_tool(tool, {"path": "a", "lines": 3}, ctx)
    assert "unknown field `lines`" in text_of(unknown)


async def test_run_tool_accepts_numbers_as_strings(work: Path, ctx: ToolContext) -> None:
    (work / "a.txt").write_text("1\n2\n3\n")
    result = await run_tool(build_tools(["read"])["read"], {"path": "a.txt", "offset": "2"}, ctx)
    assert text_of(result).startswith("     2\t2")


class Failing:
    """A tool that fails in the configured way."""

    name: ClassVar[str] = "failing"
    description: ClassVar[str] = "fails"
    kind: ClassVar[ToolKind] = "other"
    mutating: ClassVar[bool] = False

    class Params(msgspec.Struct):
        how: str

    def locations(self, params: Any, ctx: ToolContext) -> list[Location]:
        return []

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        if params.how == "tool":
            raise ToolError("nope, do this instead")
        if params.how == "os":
            raise PermissionError(13, "Permission denied", "/root/x")
        raise RuntimeError("bug")


async def test_run_tool_maps_tool_and_os_errors(ctx: ToolContext) -> None:
    tool = Failing()
    tool_error = await run_tool(tool, {"how": "tool"}, ctx)
    assert (tool_error.is_error, text_of(tool_error)) == (True, "nope, do this instead")
    os_error = await run_tool(tool, {"how": "os"}, ctx)
    assert (os_error.is_error, text_of(os_error)) == (True, "Permission denied: /root/x.")
    with pytest.raises(RuntimeError):
        await run_tool(tool, {"how": "bug"}, ctx)


def test_locations(work: Path, ctx: ToolContext) -> None:
    tools = build_tools()
    read = tools["read"].locations(
        msgspec.convert({"path": "a.py", "offset": 5}, TOOLS["read"].Params), ctx
    )
    assert read == [Location(path=str(work / "a.py"), line=5)]
    ls = tools["ls"].locations(msgspec.convert({}, TOOLS["ls"].Params), ctx)
    assert ls == [Location(path=str(work))]
    assert tools["read"].locations(msgspec.convert({"path": ""}, TOOLS["read"].Params), ctx) == []


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("bash", {"command": "echo a\0b"}),
        ("grep", {"pattern": "a\0b"}),
        ("grep", {"pattern": "a", "glob": "\0"}),
        ("read", {"path": "a\0b"}),
        ("write", {"path": "a\0b", "content": ""}),
        ("find", {"pattern": "[z-a]"}),
        ("grep", {"pattern": "x", "glob": "[z-a]", "output_mode": "files"}),
    ],
)
async def test_odd_input_gives_a_result_not_an_exception(
    ctx: ToolContext, name: str, args: dict[str, Any]
) -> None:
    result = await run_tool(build_tools([name])[name], args, ctx)
    assert isinstance(result.output, str)
