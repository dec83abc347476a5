"""An approval request shows what the call would do: diff, command and cwd, URL, MCP call.

Over a real stdio daemon with the mock LLM: the client's ``session/requestPermission`` params
and the ``permission_request`` event carry the preview computed against the file as it is.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentd.protocol.events import PermissionOption
from agentd.protocol.methods import RequestPermissionParams
from tests.harness import Home, new_session, run, stdio_client
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e


def _one_call(trigger: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": trigger,
        "trigger": trigger,
        "steps": [
            {"response": {"content": "Asking.", "tool_calls": [tool_call(name, args)]}},
            {"response": {"content": "Done."}},
        ],
    }


async def _ask(
    home: Home, trigger: str, name: str, args: dict[str, Any], answer: PermissionOption
) -> tuple[RequestPermissionParams, dict[str, Any]]:
    """Run one call in ask mode; the request params the client got and the event."""
    home.use_scenarios([_one_call(trigger, name, args)])
    asked: list[RequestPermissionParams] = []

    async def handler(params: RequestPermissionParams) -> PermissionOption:
        asked.append(params)
        return answer

    async with stdio_client(home, handler) as client:
        sid = await new_session(client, home, permissionMode="ask")
        _, events = await run(client, sid, trigger)
    request = next(e["event"] for e in events if e["event"]["type"] == "permission_request")
    assert len(asked) == 1
    return asked[0], request


async def test_an_edit_shows_its_diff_against_the_file(home: Home) -> None:
    lines = [f"line {n}\n" for n in range(1, 21)]
    (home.project / "notes.txt").write_text("".join(lines))
    args = {"path": "notes.txt", "old_string": "line 10\n", "new_string": "line ten\n"}
    params, event = await _ask(home, "change line ten", "edit", args, "allow_once")
    preview = params.preview
    assert preview is not None
    assert preview.kind == "diff"
    assert preview.error is None
    assert preview.path == "notes.txt"
    assert preview.diff is not None
    assert "-line 10\n+line ten\n" in preview.diff
    assert " line 7\n" in preview.diff
    assert " line 13\n" in preview.diff
    assert (preview.added, preview.removed) == (1, 1)
    assert preview.old_text == "".join(lines)  # the whole file, for ACP
    assert preview.new_text == "".join(lines).replace("line 10\n", "line ten\n")
    assert params.always_rule == "edit"
    shown = event["preview"]
    assert shown["diff"] == preview.diff
    assert event["alwaysRule"] == "edit"
    assert "oldText" not in shown
    assert "newText" not in shown
    assert "line ten" in (home.project / "notes.txt").read_text()


async def test_a_new_file_shows_its_head(home: Home) -> None:
    content = "".join(f"print({n})\n" for n in range(100))
    args = {"path": "pkg/new.py", "content": content}
    params, _ = await _ask(home, "create a module", "write", args, "reject_once")
    preview = params.preview
    assert preview is not None
    assert preview.created
    assert preview.truncated
    assert preview.diff is not None
    assert preview.diff.startswith("--- /dev/null\n+++ b/pkg/new.py\n")
    assert "+print(0)\n" in preview.diff
    assert "+print(59)\n" in preview.diff
    assert "print(60)" not in preview.diff
    assert preview.added == 100
    assert not (home.project / "pkg" / "new.py").exists()


async def test_an_overwrite_shows_what_changes(home: Home) -> None:
    (home.project / "conf.ini").write_text("a = 1\nb = 2\n")
    args = {"path": "conf.ini", "content": "a = 1\nb = 3\n"}
    params, _ = await _ask(home, "overwrite the conf", "write", args, "reject_once")
    assert params.preview is not None
    assert not params.preview.created
    assert params.preview.diff is not None
    assert "-b = 2\n+b = 3\n" in params.preview.diff


async def test_an_edit_that_would_fail_says_why(home: Home) -> None:
    (home.project / "notes.txt").write_text("alpha\n")
    args = {"path": "notes.txt", "old_string": "omega", "new_string": "beta"}
    params, _ = await _ask(home, "edit a missing word", "edit", args, "reject_once")
    preview = params.preview
    assert preview is not None
    assert preview.diff is None
    assert preview.error is not None
    assert "not found" in preview.error.lower()


async def test_bash_shows_the_command_and_cwd(home: Home) -> None:
    command = "npm test -- --watch=false && echo done"
    params, event = await _ask(home, "run the tests", "bash", {"command": command}, "reject_once")
    assert params.preview is not None
    assert params.preview.kind == "command"
    assert params.preview.command == command
    assert params.preview.cwd == str(home.project)
    assert params.always_rule == "bash(npm test:*), bash(echo:*)"
    assert event["preview"] == {"kind": "command", "command": command, "cwd": str(home.project)}


async def test_web_fetch_shows_the_url(home: Home) -> None:
    url = "https://docs.example.org/guide?page=2"
    params, _ = await _ask(home, "fetch the guide", "web_fetch", {"url": url}, "reject_once")
    assert params.preview is not None
    assert params.preview.kind == "url"
    assert params.preview.url == url
    assert params.always_rule == "web_fetch(domain:docs.example.org)"
