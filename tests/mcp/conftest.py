"""Fixtures of the MCP tests: a home whose user config names the test server
(:mod:`tests.mcp.server`), with scenarios that call its tools."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Home
from tests.scenarios import tool_call

SERVER = Path(__file__).with_name("server.py")


def mcp_call(trigger: str, tool: str, args: dict[str, Any], repeat: int = 1) -> dict[str, Any]:
    """A scenario: the model calls ``tool`` (``repeat`` times in one reply), then says done."""
    calls = [tool_call(tool, args, f"call_{i}") for i in range(repeat)]
    return {
        "name": trigger,
        "trigger": trigger,
        "steps": [
            {"response": {"content": "", "tool_calls": calls}},
            {"response": {"content": f"{trigger} done"}},
        ],
    }


SCENARIOS = [
    mcp_call("mcp-add", "mcp__t__add", {"a": 2, "b": 3}),
    mcp_call("mcp-fail", "mcp__t__fail", {"reason": "no luck"}),
    mcp_call("mcp-picture", "mcp__t__picture", {}),
    mcp_call("mcp-resources", "mcp__t__resources", {}),
    mcp_call("mcp-crash", "mcp__t__crash", {}),
    mcp_call("mcp-env", "mcp__t__env", {"name": "MCP_SECRET_API_KEY"}),
    mcp_call("mcp-named-env", "mcp__t__env", {"name": "GREETING"}),
    mcp_call("mcp-long", "mcp__t__long_text", {"lines": 5000}),
    mcp_call("mcp-lookup", "mcp__t__lookup", {"key": "k"}),
    mcp_call("mcp-extra", "mcp__t__extra", {}),
    mcp_call("mcp-http-add", "mcp__web__add", {"a": 20, "b": 22}),
    mcp_call("mcp-count", "mcp__t__count", {"steps": 3}),
    mcp_call("mcp-http-count", "mcp__web__count", {"steps": 3}),
    mcp_call("mcp-many", "mcp__t__add", {"a": 1, "b": 1}, repeat=50),
    {
        "name": "mcp-grow",
        "trigger": "mcp-grow",
        "steps": [
            {"response": {"tool_calls": [tool_call("mcp__t__grow", {}, "g1")]}},
            {"response": {"tool_calls": [tool_call("mcp__t__extra", {}, "g2")]}},
            {"response": {"content": "grew"}},
        ],
    },
]


def server_table(name: str = "t", *extra: str, **keys: Any) -> str:
    """A ``[mcp_servers.NAME]`` table running the test server with ``extra`` arguments."""
    lines = [
        f"[mcp_servers.{name}]",
        f"command = {json.dumps(sys.executable)}",
        f"args = {json.dumps([str(SERVER), *extra])}",
    ]
    for key, value in keys.items():
        if isinstance(value, dict):
            inner = ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items())
            lines.append(f"{key} = {{ {inner} }}")
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def write_user_config(home: Home, text: str) -> Path:
    """The user's config.toml: ``text`` with the tests' run mode (``Home.user_config``)."""
    return home.user_config(text)


@pytest.fixture
def home() -> Iterator[Home]:
    """The e2e home with the MCP scenarios first."""
    with Home() as box:
        box.use_scenarios(SCENARIOS)
        yield box
