"""Tools through a real daemon: the workspace sandbox, [tools] settings, spill retention."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from agentd.errors import RpcError
from tests.harness import Home, new_session, run, stdio_client

pytestmark = pytest.mark.e2e


def scenario(trigger: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """A mock-LLM scenario: one tool call on ``trigger``, then a closing reply."""
    call = {"id": "call_t", "type": "function"}
    call["function"] = {"name": tool, "arguments": json.dumps(args)}
    steps = [{"response": {"content": "On it.", "tool_calls": [call]}}]
    return {"name": trigger, "trigger": trigger, "steps": [*steps, {"response": {"content": "ok"}}]}


def add_scenarios(home: Home, *extra: dict[str, Any]) -> None:
    path = home.root / "scenarios.json"
    data = json.loads(path.read_text())
    data["scenarios"] = [*extra, *data["scenarios"]]
    path.write_text(json.dumps(data))


def configure(home: Home, top: str = "", tables: str = "") -> None:
    """Top-level keys go before the existing tables of the project file, tables after."""
    home.project_config(top, tables)


def tool_end(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e["event"] for e in events if e["event"]["type"] == "tool_execution_end")


@pytest.fixture
def escape(home: Home) -> Path:
    """``proj/escape`` links to a directory outside the project holding ``secret.txt``."""
    outside = home.root / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the secret\n")
    (home.project / "escape").symlink_to(outside)
    add_scenarios(
        home,
        scenario("read through the link", "read", {"path": "escape/secret.txt"}),
        scenario("write through the link", "write", {"path": "escape/new.txt", "content": "x"}),
    )
    return outside


@pytest.mark.parametrize("prompt", ["read through the link", "write through the link"])
async def test_workspace_sandbox_refuses_a_symlink_escape(
    home: Home, escape: Path, prompt: str
) -> None:
    configure(home, top='sandbox = "workspace"\n')
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        result, events = await run(client, sid, prompt)
    end = tool_end(events)
    assert end["isError"]
    text = end["result"][0]["text"]
    assert "outside the workspace" in text
    assert "the secret" not in text
    assert not (escape / "new.txt").exists()
    assert result["stopReason"] == "end_turn"


async def test_sandbox_as_a_session_option_is_kept_after_a_restart(
    home: Home, escape: Path
) -> None:
    """``session/new {sandbox}`` confines the session, and a reload in a new daemon (with no
    sandbox in the configuration) still does."""
    async with stdio_client(home) as client:
        sid = await new_session(client, home, sandbox="workspace")
        _, first = await run(client, sid, "read through the link")
    async with stdio_client(home) as client:
        _, again = await run(client, sid, "read through the link")
    for events in (first, again):
        end = tool_end(events)
        assert end["isError"]
        assert "outside the workspace" in end["result"][0]["text"]


async def test_without_the_sandbox_the_link_is_followed(home: Home, escape: Path) -> None:
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "read through the link")
    end = tool_end(events)
    assert not end.get("isError", False)
    assert "the secret" in end["result"][0]["text"]


@pytest.mark.parametrize(
    ("top", "tables", "message"),
    [
        ('sandbox = "workspac"\n', "", "sandbox must be"),
        ("", "[tools]\nbash_timeout = -1\n", "bash_timeout"),
        ("", "[tools]\nmax_lines = 5\n", "max_lines"),
        ("", "[permissions]\ntimeout = 'soon'\n", "timeout"),
    ],
)
async def test_bad_tool_settings_are_config_errors(
    home: Home, top: str, tables: str, message: str
) -> None:
    configure(home, top, tables)
    async with stdio_client(home) as client:
        with pytest.raises(RpcError) as error:
            await new_session(client, home)
    assert error.value.code == -32005
    assert message in error.value.message


async def test_the_sandboxed_temp_dir_is_the_sessions_and_deleted_with_it(home: Home) -> None:
    configure(home, top='sandbox = "workspace"\n')
    command = 'echo kept > "$TMPDIR/f" && echo "$TMPDIR"'
    add_scenarios(home, scenario("use the temp dir", "bash", {"command": command}))
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "use the temp dir")
        tmp = Path(tool_end(events)["result"][0]["text"].strip())
        assert tmp.name == sid
        assert (tmp / "f").read_text() == "kept\n"
        assert stat.S_IMODE(tmp.stat().st_mode) == 0o700
        await client.call("session/delete", {"sessionId": sid})
    assert not tmp.exists()
    assert tmp.parent.is_dir()  # other sessions' temp dirs live beside it


async def test_spill_files_are_private_and_deleted_with_the_session(home: Home) -> None:
    configure(home, tables="[tools]\nmax_output_lines = 5\n")
    add_scenarios(home, scenario("flood the output", "bash", {"command": "seq 1 100000"}))
    async with stdio_client(home) as client:
        sid = await new_session(client, home)
        _, events = await run(client, sid, "flood the output")
        end = tool_end(events)
        spill = Path(end["details"]["spillPath"])
        assert end["result"][0]["text"].splitlines()[:5] == [str(n) for n in range(99996, 100001)]
        assert spill.parent == home.root / "sta" / "agentd" / "spill" / sid
        assert stat.S_IMODE(spill.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(spill.parent.parent.stat().st_mode) == 0o700
        assert len(spill.read_text().splitlines()) == 100000
        await client.call("session/delete", {"sessionId": sid})
    assert not spill.parent.exists()
