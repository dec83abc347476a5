"""``agentd mcp`` driven by the official MCP SDK's client, as Claude Desktop or Codex would:
a whole turn per call, progress, cancellation, elicited approvals, the shared daemon."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp import ClientSession
from tests.e2e.test_orphans import running
from tests.harness import Home, stop, wait_until_async

pytestmark = pytest.mark.e2e


@contextlib.asynccontextmanager
async def agentd_mcp(home: Home, *extra: str, **session: Any) -> AsyncIterator[ClientSession]:
    argv = ["-m", "agentd", "mcp", "--provider", "mock", "--root", str(home.project), *extra]
    params = StdioServerParameters(command=sys.executable, args=argv, env=home.env)
    with home.stderr.open("a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, **session) as client,
        ):
            await client.initialize()
            yield client


async def test_run_and_reply(home: Home) -> None:
    progress: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with agentd_mcp(home) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == ["agentd_run", "agentd_reply"]
        first = await client.call_tool(
            "agentd_run",
            {"prompt": "write a note", "cwd": str(home.project)},
            progress_callback=on_progress,
        )
        assert not first.is_error, first
        assert first.content[0].text == "Written."
        structured = first.structured_content
        assert structured is not None
        assert structured["stopReason"] == "end_turn"
        assert structured["filesChanged"] == [str(home.project / "note.txt")]
        assert structured["usage"]["inputTokens"] > 0
        sid = structured["sessionId"]
        second = await client.call_tool("agentd_reply", {"sessionId": sid, "prompt": "hello"})
        assert second.structured_content["sessionId"] == sid
        unknown = await client.call_tool("agentd_reply", {"sessionId": "nope", "prompt": "x"})
    assert (home.project / "note.txt").read_text() == "noted\n"
    assert "turn 1" in progress
    assert "running write" in progress
    assert unknown.is_error
    assert "nope" in unknown.content[0].text


async def test_ask_mode_without_elicitation_is_refused(home: Home) -> None:
    async with agentd_mcp(home) as client:
        refused = await client.call_tool(
            "agentd_run",
            {"prompt": "write a note", "cwd": str(home.project), "permissionMode": "ask"},
        )
    assert refused.is_error
    assert "needs an MCP client that supports elicitation" in refused.content[0].text
    assert not (home.project / "note.txt").exists()


async def test_ask_mode_asks_through_elicitation(home: Home) -> None:
    from mcp.types import ElicitResult

    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"allow": True, "always": False})

    async with agentd_mcp(home, elicitation_callback=elicit) as client:
        result = await client.call_tool(
            "agentd_run",
            {"prompt": "write a note", "cwd": str(home.project), "permissionMode": "ask"},
        )
    assert not result.is_error, result
    assert len(asked) == 1
    assert "write" in asked[0]
    assert "note.txt" in asked[0]
    assert (home.project / "note.txt").read_text() == "noted\n"


def sleeps_in(folder: Path) -> list[int]:
    """The ``sleep 30`` processes running in ``folder`` (this test's, not another's)."""
    found = []
    for pid in running("sleep 30"):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cwd").resolve() == folder.resolve():
                found.append(pid)
    return found


async def test_mcp_cancellation_cancels_the_run(home: Home) -> None:
    async with agentd_mcp(home) as client:
        call = asyncio.create_task(
            client.call_tool(
                "agentd_run", {"prompt": "nap in bash after a mark", "cwd": str(home.project)}
            )
        )
        await wait_until_async(lambda: sleeps_in(home.project), 30, "the bash call to start")
        call.cancel()  # the SDK sends notifications/cancelled
        with contextlib.suppress(asyncio.CancelledError):
            await call
        await wait_until_async(lambda: not sleeps_in(home.project), 15, "the run to be cancelled")


async def test_shared_relays_to_the_shared_daemon(home: Home) -> None:
    daemon = home.start_socket_daemon()
    try:
        async with agentd_mcp(home, "--shared", "--socket", str(home.socket)) as client:
            result = await client.call_tool(
                "agentd_run", {"prompt": "write a note", "cwd": str(home.project)}
            )
        sid = result.structured_content["sessionId"]
        from tests.harness import socket_client

        async with socket_client(home) as shell:
            listed = await shell.call("session/list", {})
    finally:
        stop(daemon)
    assert sid in [s["sessionId"] for s in listed["sessions"]]


@pytest.mark.parametrize("shared", [False, True])
async def test_reply_continues_only_sessions_this_server_started(home: Home, shared: bool) -> None:
    """A session another client opened (in the store, or live in the shared daemon, in its
    ``auto`` mode) cannot be continued through ``agentd_reply``: the host would run prompts
    in someone else's session with that session's permissions."""
    from tests.harness import new_session, socket_client, stdio_client

    daemon = home.start_socket_daemon() if shared else None
    try:
        opener = socket_client(home) if shared else stdio_client(home)
        async with opener as other:
            theirs = await new_session(other, home, permissionMode="auto")
        extra = ["--shared", "--socket", str(home.socket)] if shared else []
        async with agentd_mcp(home, *extra) as client:
            refused = await client.call_tool(
                "agentd_reply", {"sessionId": theirs, "prompt": "write a note"}
            )
            ours = await client.call_tool(
                "agentd_run", {"prompt": "how are you", "cwd": str(home.project)}
            )
            again = await client.call_tool(
                "agentd_reply",
                {"sessionId": ours.structured_content["sessionId"], "prompt": "how are you"},
            )
    finally:
        if daemon is not None:
            stop(daemon)
    assert refused.is_error
    assert "only the sessions agentd_run started in this agentd mcp server" in (
        refused.content[0].text
    )
    assert not (home.project / "note.txt").exists()
    assert not again.is_error, again


async def test_session_dir_holds_the_in_process_sessions(home: Home, tmp_path: Path) -> None:
    """``--session-dir`` (every front-end's option) is where a private daemon keeps its
    session files."""
    folder = tmp_path / "sessions"
    async with agentd_mcp(home, "--session-dir", str(folder)) as client:
        ran = await client.call_tool("agentd_run", {"prompt": "hello", "cwd": str(home.project)})
    assert not ran.is_error, ran
    sid = ran.structured_content["sessionId"]  # type: ignore[index]
    (stored,) = folder.rglob("*.jsonl")
    assert stored.stem.endswith(sid)


async def test_agentd_run_works_only_in_its_roots(home: Home) -> None:
    """``agentd mcp --root DIR``: a cwd outside every root is refused, and a workspace
    sandbox rooted at ``/`` is refused even when ``/`` is a root."""
    home.user_config('sandbox = "workspace"\n')
    async with agentd_mcp(home, "--root", "/") as client:
        inside = await client.call_tool("agentd_run", {"prompt": "hello", "cwd": str(home.project)})
        whole = await client.call_tool("agentd_run", {"prompt": "write a note", "cwd": "/"})
    async with agentd_mcp(home) as client:
        outside = await client.call_tool("agentd_run", {"prompt": "hello", "cwd": str(home.root)})
    assert not inside.is_error, inside
    assert whole.is_error
    assert "rooted at /: it is the filesystem root" in whole.content[0].text
    assert outside.is_error
    assert "outside the folders this agentd mcp may work in" in outside.content[0].text
    assert not Path("/note.txt").exists()
