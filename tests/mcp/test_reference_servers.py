"""The MCP reference servers from npm (``@modelcontextprotocol/server-filesystem`` and
``server-everything``, ``tests/mcp/reference/package-lock.json``, installed by
:mod:`tests.mcp.npm`) through a real daemon, the agent loop and the mock LLM: the model calls
``mcp__fs__…`` and ``mcp__ev__…`` tools and the results, files, images, progress and
permissions are checked. Skipped, saying why, without node and npm."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import RequestPermissionParams
from tests.harness import Home, new_session, run, scaled, stdio_client
from tests.mcp.conftest import write_user_config
from tests.mcp.npm import REFERENCE, installed, node
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def servers() -> dict[str, list[str]]:
    """The command of each reference server (node and its entry point)."""
    modules = installed(REFERENCE) / "@modelcontextprotocol"
    return {
        name: [node(), str(modules / f"server-{name}" / "dist" / "index.js")]
        for name in ("filesystem", "everything")
    }


def configure(home: Home, name: str, argv: list[str], trusted: bool = False) -> None:
    """``[mcp_servers.NAME]`` running ``argv`` (what ``agentctl mcp add`` writes);
    ``trusted``: its tool annotations are believed (``trust_annotations``)."""
    write_user_config(
        home,
        f"[mcp_servers.{name}]\ncommand = {json.dumps(argv[0])}\n"
        f"args = {json.dumps(argv[1:])}\nstartup_timeout = {scaled(60):g}\n"
        + ("trust_annotations = true\n" if trusted else ""),
    )


def sequence(trigger: str, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A scenario: the model makes ``calls`` one per reply, in order, then says done."""
    steps = [
        {"response": {"content": "", "tool_calls": [tool_call(name, args, f"call_{i}")]}}
        for i, (name, args) in enumerate(calls)
    ]
    return {"name": trigger, "trigger": trigger, "steps": [*steps, {"response": {"content": "ok"}}]}


def ends(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]


def text_of(end: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in end["result"])


async def test_filesystem_server_reads_and_writes_in_its_folder(
    home: Home, servers: dict[str, list[str]], tmp_path: Path
) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "given.txt").write_text("given by the test\n")
    configure(home, "fs", [*servers["filesystem"], str(folder)])
    outside = tmp_path / "outside.txt"
    home.use_scenarios(
        [
            sequence(
                "fs-round-trip",
                ("mcp__fs__write_file", {"path": str(folder / "new.txt"), "content": "written"}),
                ("mcp__fs__read_text_file", {"path": str(folder / "given.txt")}),
                ("mcp__fs__list_directory", {"path": str(folder)}),
                ("mcp__fs__write_file", {"path": str(outside), "content": "escape"}),
            )
        ]
    )
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, "fs-round-trip", timeout=120)
    write, read, listing, escape = ends(events)
    assert result["stopReason"] == "end_turn"
    assert [e["name"] for e in (write, read)] == ["mcp__fs__write_file", "mcp__fs__read_text_file"]
    assert (write["details"]["server"], write["details"]["tool"]) == ("fs", "write_file")
    assert (folder / "new.txt").read_text() == "written"
    assert text_of(read) == "given by the test\n"
    assert "[FILE] given.txt" in text_of(listing)
    assert "[FILE] new.txt" in text_of(listing)
    assert escape["isError"], escape  # the server refuses paths outside its folders
    assert "outside" in text_of(escape).lower() or "denied" in text_of(escape).lower()
    assert not outside.exists()


async def test_filesystem_server_in_ask_and_read_only_modes(
    home: Home, servers: dict[str, list[str]], tmp_path: Path
) -> None:
    asked: list[RequestPermissionParams] = []

    async def refuse(params: RequestPermissionParams) -> PermissionOption:
        asked.append(params)
        return "reject_once"

    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha")
    configure(home, "fs", [*servers["filesystem"], str(folder)], trusted=True)
    target = str(folder / "b.txt")
    home.use_scenarios(
        [
            sequence(
                "fs-modes",
                ("mcp__fs__read_text_file", {"path": str(folder / "a.txt")}),
                ("mcp__fs__write_file", {"path": target, "content": "beta"}),
            )
        ]
    )
    async with stdio_client(home, refuse) as client:
        ask = await new_session(client, home, permissionMode="ask")
        _, asked_events = await run(client, ask, "fs-modes", timeout=120)
        read_only = await new_session(client, home, permissionMode="read-only")
        _, read_only_events = await run(client, read_only, "fs-modes", timeout=120)
    read, write = ends(asked_events)
    assert text_of(read) == "alpha"  # readOnlyHint of a server the user trusts: not asked
    assert [(p.tool, p.args) for p in asked] == [
        ("mcp__fs__write_file", {"path": target, "content": "beta"})
    ]
    assert write["isError"]
    read, write = ends(read_only_events)
    assert text_of(read) == "alpha"
    assert write["isError"]
    assert "read-only" in text_of(write)
    assert not Path(target).exists()


async def test_everything_server_tools(
    home: Home, servers: dict[str, list[str]], tmp_path: Path
) -> None:
    configure(home, "ev", [*servers["everything"], "stdio"])
    home.use_scenarios(
        [
            sequence(
                "ev-tools",
                ("mcp__ev__echo", {"message": "hello there"}),
                ("mcp__ev__get-sum", {"a": 2, "b": 40}),
                ("mcp__ev__get-structured-content", {"location": "Chicago"}),
                ("mcp__ev__get-resource-links", {"count": 2}),
                ("mcp__ev__get-sum", {"a": "two"}),
            ),
            # alone: an image goes back to the model in a message of its own
            sequence("ev-image", ("mcp__ev__get-tiny-image", {})),
        ]
    )
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "ev-tools", timeout=120)
        _, pictured = await run(client, sid, "ev-image", timeout=120)
    echo, add, structured, links, bad = ends(events)
    (image,) = ends(pictured)
    assert text_of(echo) == "Echo: hello there"
    assert "is 42" in text_of(add)
    assert any(block["type"] == "image" for block in image["result"]), image
    assert image["details"]["server"] == "ev"
    assert structured["details"]["structuredContent"]["temperature"] is not None
    assert text_of(links).count("[resource link]") == 2
    assert bad["isError"], bad  # arguments the server's schema refuses: an error result


async def test_everything_server_long_running_operation_reports_progress(
    home: Home, servers: dict[str, list[str]]
) -> None:
    configure(home, "ev", [*servers["everything"], "stdio"])
    long_running = ("mcp__ev__trigger-long-running-operation", {"duration": 1, "steps": 4})
    home.use_scenarios([sequence("ev-long", long_running)])
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "ev-long", timeout=120)
    updates = [
        e["event"]["output"] for e in events if e["event"]["type"] == "tool_execution_update"
    ]
    assert updates == [f"[progress {step}/4]\n" for step in range(1, 5)]
    (end,) = ends(events)
    assert not end.get("isError"), end
    assert "completed" in text_of(end).lower()


async def test_everything_server_tools_that_need_sampling_are_not_offered(
    home: Home, servers: dict[str, list[str]]
) -> None:
    """agentd declares ``elicitation`` but no ``sampling`` or ``roots`` capability: the server
    offers its elicitation tools and leaves out the ones that would ask for sampling, and a
    model naming one gets an unknown tool."""
    configure(home, "ev", [*servers["everything"], "stdio"])
    home.use_scenarios(
        [sequence("ev-sampling", ("mcp__ev__trigger-sampling-request", {"prompt": "hi"}))]
    )
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "ev-sampling", timeout=120)
        listed = await client.call("mcp/list", {"cwd": str(home.project)})
    (server,) = [s for s in listed["servers"] if s["name"] == "ev"]
    assert server["state"] == "running"
    assert "mcp__ev__echo" in server["tools"]
    assert not [t for t in server["tools"] if "sampling" in t]
    assert "mcp__ev__trigger-elicitation-request" in server["tools"]
    (end,) = ends(events)
    assert end["isError"]
    assert "Unknown tool 'mcp__ev__trigger-sampling-request'" in text_of(end)
