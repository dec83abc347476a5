"""Permission bypasses through a real daemon: a scripted model tries each, nothing lands."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.harness import Home, new_session, run, stdio_client

pytestmark = pytest.mark.e2e

RULES = """
[permissions]
allow = ["bash(npm test:*)", "write(src/**)", "read"]
deny = ["bash(rm:*)", "write(.git/**)", "read(.env)"]
"""
SNEAKY_COMMANDS = ["npm test #x\ntouch p1", "npm test a#b; touch p2", "npm test $(touch p3)"]
SNEAKY_PATHS = ["src/../../outside.txt", "src/../.git/hooks/pre-commit"]


def _call(index: int, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    arguments = json.dumps(args)
    function = {"name": tool, "arguments": arguments}
    return {"id": f"call_{index}", "type": "function", "function": function}


def _scenario(trigger: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    tool_calls = [_call(index, tool, args) for index, (tool, args) in enumerate(calls)]
    return {
        "name": trigger,
        "trigger": trigger,
        "steps": [
            {"response": {"content": "Trying.", "tool_calls": tool_calls}},
            {"response": {"content": "Done."}},
        ],
    }


@pytest.fixture
def attacks(home: Home) -> Home:
    """The project's rules, a secret, a symlink to it, and the scripted attacks."""
    home.project_config(tables=RULES)
    (home.project / "src").mkdir()
    (home.project / ".git" / "hooks").mkdir(parents=True)
    (home.project / ".env").write_text("PASSWORD=hunter2-from-env\n")
    (home.project / "link").symlink_to(home.project / ".env")
    (home.project / "victim.txt").write_text("keep me\n")
    sneaky = [("bash", {"command": c}) for c in SNEAKY_COMMANDS]
    sneaky += [("write", {"path": p, "content": "#!/bin/sh\necho owned\n"}) for p in SNEAKY_PATHS]
    denied = [
        ("bash", {"command": "/bin/rm victim.txt"}),
        ("bash", {"command": "grep PASSWORD .env"}),
        ("read", {"path": "link"}),
        ("grep", {"pattern": "PASSWORD", "path": "."}),
    ]
    path = home.root / "scenarios.json"
    document = json.loads(path.read_text())
    document["scenarios"][:0] = [_scenario("sneak", sneaky), _scenario("bypass deny", denied)]
    path.write_text(json.dumps(document))
    return home


def _results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["event"] for e in events if e["event"]["type"] == "tool_execution_end"]


async def test_allow_rules_approve_nothing_hidden(attacks: Home) -> None:
    """ask mode, no client to answer: every sneaky call is refused, no file appears."""
    async with stdio_client(attacks) as client:
        sid = await new_session(client, attacks, permissionMode="ask")
        _, events = await run(client, sid, "sneak")
        readonly = await new_session(client, attacks, permissionMode="read-only")
        _, more = await run(client, readonly, "sneak")
    assert [r.get("isError", False) for r in _results(events) + _results(more)] == [True] * 10
    for name in ("p1", "p2", "p3"):
        assert not (attacks.project / name).exists()
    assert not (attacks.root / "outside.txt").exists()
    assert not (attacks.project / ".git" / "hooks" / "pre-commit").exists()


async def test_deny_rules_hold_in_auto_mode(attacks: Home) -> None:
    """/bin/rm, grep of .env, a symlink to .env, a recursive grep: refused or filtered."""
    async with stdio_client(attacks) as client:
        sid = await new_session(client, attacks, permissionMode="auto")
        _, events = await run(client, sid, "bypass deny")
    results = _results(events)
    assert [r.get("isError", False) for r in results] == [True, True, True, False]
    assert (attacks.project / "victim.txt").read_text() == "keep me\n"
    assert "hunter2" not in json.dumps(events)
