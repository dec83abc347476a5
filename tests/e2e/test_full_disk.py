"""A full disk through a real daemon: bash spill files on a full tmpfs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentd.errors import RpcError
from tests.e2e.test_tools import add_scenarios, scenario, tool_end
from tests.harness import Home, new_session, run, scaled, stdio_client, wait_until
from tests.smallfs import fill, small_tmpfs

pytestmark = pytest.mark.e2e

HUGE_OUTPUT = "head -c 300000000 /dev/zero | tr '\\0' y"


def peak_rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1])


def log_lines(home: Home) -> list[dict[str, object]]:
    lines = (home.root / "daemon.log").read_text().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


async def test_bash_output_on_a_full_spill_disk_stays_small_and_warns_once(home: Home) -> None:
    add_scenarios(home, scenario("print a lot", "bash", {"command": HUGE_OUTPUT}))
    spill_root = home.root / "sta" / "agentd" / "spill"
    with small_tmpfs(spill_root, 1 << 20):
        fill(spill_root)
        async with stdio_client(home) as client:
            sid = await new_session(client, home)
            result, events = await run(client, sid, "print a lot", timeout=60)
            assert client.process is not None
            peak = peak_rss_kib(client.process.pid)
            wait_until(  # written by the log's own thread while the daemon still runs
                lambda: any(r["event"] == "spill_stopped" for r in log_lines(home)),
                scaled(20),
                "the spill_stopped log line",
            )
        end = tool_end(events)
    assert result["stopReason"] == "end_turn"
    text = end["result"][0]["text"]
    assert text.rstrip().splitlines()[0].startswith("yyyy")
    assert "No space left on device" in text
    assert " of 300000000 bytes of output are in " in text
    assert peak < 200 * 1024, f"daemon peaked at {peak} KiB"
    records = log_lines(home)
    assert [r["event"] for r in records if r["event"] == "spill_stopped"] == ["spill_stopped"]
    assert not [r for r in records if r.get("level") in ("error", "critical")]


async def test_a_full_session_disk_ends_the_run_cleanly_and_loses_nothing_saved(
    home: Home,
) -> None:
    """The prompt cannot be written: the client is told (session_warning "disk full: …",
    an error event, stop reason error); after space returns the session goes on, and a
    reload holds exactly what was reported saved."""
    with small_tmpfs(home.sessions, 1 << 20):
        async with stdio_client(home) as client:
            sid = await new_session(client, home)
            first, _ = await run(client, sid, "hello world")
            assert first["stopReason"] == "end_turn"
            filler = fill(home.sessions, leave=100)
            failed, events = await run(client, sid, "please remember " + "x" * 20_000)
            filler.unlink()
            again, _ = await run(client, sid, "how are you")
            live = await client.call("session/messages", {"sessionId": sid})
        async with stdio_client(home) as client:
            await client.call("session/load", {"sessionId": sid})
            reloaded = await client.call("session/messages", {"sessionId": sid})
    assert failed["stopReason"] == "error"
    assert failed["error"].startswith("disk full: ")
    warnings = [e["event"] for e in events if e["event"]["type"] == "session_warning"]
    assert [w["message"][:11] for w in warnings] == ["disk full: "]
    errors = [e["event"] for e in events if e["event"]["type"] == "error"]
    assert [e.get("code") for e in errors] == ["store_error"]
    assert kinds_tail(events) == ["error", "agent_end"]
    assert again["stopReason"] == "end_turn"
    assert live["messages"] == reloaded["messages"]
    texts = [str(m["content"]) for m in reloaded["messages"] if m["role"] == "user"]
    assert len(texts) == 2
    assert "please remember" not in "".join(texts)
    assert not [r for r in log_lines(home) if r.get("level") in ("error", "critical")]


def kinds_tail(events: list[dict[str, object]]) -> list[str]:
    return [e["event"]["type"] for e in events[-2:]]  # type: ignore[index]


async def test_a_second_daemon_cannot_load_a_loaded_session(home: Home) -> None:
    async with stdio_client(home) as first:
        sid = await new_session(first, home)
        await run(first, sid, "hello world")
        assert first.process is not None
        holder = first.process.pid
        async with stdio_client(home) as second:
            with pytest.raises(RpcError) as caught:
                await second.call("session/load", {"sessionId": sid})
            assert caught.value.code == -32010
            assert caught.value.data["pid"] == holder
            assert f"process {holder}" in caught.value.message
            with pytest.raises(RpcError) as prompted:
                await second.call("session/prompt", {"sessionId": sid, "text": "hi"})
            assert prompted.value.code == -32010
        await run(first, sid, "how are you")
    async with stdio_client(home) as third:
        await third.call("session/load", {"sessionId": sid})
