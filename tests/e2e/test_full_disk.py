"""A full disk through a real daemon: bash spill files on a full tmpfs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.daemon import Home, new_session, run, stdio_client
from tests.e2e.test_tools import add_scenarios, scenario, tool_end
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
