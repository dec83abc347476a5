"""bash with background: true and the process tools, with real processes: a loopback server
that answers while the call has long returned, output reads (wait, filter, tail), a group
kill, the exit note told once, the per-session cap, bounded memory, the sandbox."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from agentd.hardening import landlock_abi
from agentd.protocol.events import Event
from agentd.protocol.processes import ProcessDetails, ProcessExit, ProcessOutput, ProcessStart
from agentd.tools.base import ToolContext, ToolPorts
from agentd.tools.defaults import ToolSettings
from agentd.tools.process import mountns
from agentd.tools.process.table import ProcessTable
from tests.harness import scaled, wait_until_async
from tests.tools.conftest import call, text_of
from tests.tools.test_tool_bash import live_processes, marker_seconds

SERVER = """
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print("listening", s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"hello from the background\\n"); c.close()
"""


@pytest.fixture
async def bg(work: Path):
    """A session context with a process table whose events are collected."""
    table = ProcessTable()
    events: list[Event] = []
    table.emit = events.append
    ctx = ToolContext(
        cwd=work, session_id="bg-test", spill_dir=work / ".spill", ports=ToolPorts(processes=table)
    )
    ctx.events = events  # type: ignore[attr-defined]
    try:
        yield ctx
    finally:
        await table.close(0.5)


def table_of(ctx: ToolContext) -> ProcessTable:
    assert ctx.processes is not None
    return ctx.processes


async def test_a_background_server_answers_on_loopback(bg: ToolContext, work: Path) -> None:
    (work / "server.py").write_text(SERVER)
    started = time.monotonic()
    result = await call(
        "bash", bg, command=f"{sys.executable} -u server.py", background=True, description="srv"
    )
    assert time.monotonic() - started < scaled(2)
    assert not result.is_error, text_of(result)
    assert isinstance(result.details, ProcessDetails)
    info = result.details.process
    assert (info.id, info.state, info.description) == ("p1", "running", "srv")
    assert info.pid > 0
    assert "Started background process p1" in text_of(result)
    read = await call(
        "process_output", bg, id="p1", wait_ms=int(scaled(10) * 1000), filter="listen"
    )
    port = int(text_of(read).split()[1])
    with socket.create_connection(("127.0.0.1", port), timeout=scaled(5)) as conn:
        assert conn.makefile("rb").readline() == b"hello from the background\n"
    assert "[p1: running" in text_of(read)
    listed = await call("process_list", bg)
    assert "p1\trunning" in text_of(listed)
    assert "server.py (srv)" in text_of(listed)
    assert isinstance(bg.events[0], ProcessStart)  # type: ignore[attr-defined]


async def test_output_waits_filters_and_tails(bg: ToolContext) -> None:
    table = table_of(bg)
    lines = " ".join(f"'line {i}' 'other {i}'" for i in range(1, 6))
    await call("bash", bg, command=f"sleep 0.2; printf '%s\\n' {lines}", background=True)
    await wait_until_async(lambda: not table.get("p1").running, 10)
    tail = await call("process_output", bg, id="p1", filter="^line", tail=2)
    shown = text_of(tail).splitlines()
    assert shown[:2] == ["line 4", "line 5"]
    assert shown[2].startswith("[p1: exited 0, ")
    # wait for a matching line while it runs, then for the end
    await call("bash", bg, command="sleep 0.3; echo done; sleep 0.3; echo err >&2", background=True)
    wait = int(scaled(10) * 1000)
    ready = await call("process_output", bg, id="p2", wait_ms=wait, filter="done")
    assert text_of(ready).splitlines()[0] == "done"
    assert "[p2: running" in text_of(ready)
    final = await call("process_output", bg, id="p2", wait_ms=wait)
    assert text_of(final).startswith(("err\n[p2: running", "err\n[p2: exited 0"))
    await wait_until_async(lambda: not table.get("p2").running, 10)
    empty = await call("process_output", bg, id="p2")
    assert text_of(empty).startswith("(no new output)\n[p2: exited 0")


async def test_stdout_and_stderr_interleave_in_order(bg: ToolContext) -> None:
    command = "sleep 0.2; for i in 1 2 3; do echo out $i; echo err $i >&2; done"
    await call("bash", bg, command=command, background=True)
    await wait_until_async(lambda: not table_of(bg).get("p1").running, 10)
    read = await call("process_output", bg, id="p1")
    assert text_of(read).splitlines()[:6] == [
        "out 1", "err 1", "out 2", "err 2", "out 3", "err 3"
    ]  # fmt: skip
    spill = table_of(bg).get("p1").spill.path
    assert spill is not None
    assert spill.read_text().startswith("out 1\nerr 1\n")


async def test_wait_returns_at_exit_and_an_unfiltered_read_takes_everything(
    bg: ToolContext,
) -> None:
    await call("bash", bg, command="sleep 0.3; printf 'a\\nb'; exit 4", background=True)
    read = await call("process_output", bg, id="p1", wait_ms=int(scaled(20) * 1000), filter="zzz")
    assert "[p1: exited 4" in text_of(read)
    assert read.details.process.exit_code == 4  # type: ignore[union-attr]
    assert isinstance(bg.events[-1], ProcessExit)  # type: ignore[attr-defined]


async def test_bad_ids_and_filters_are_clear_errors(bg: ToolContext) -> None:
    missing = await call("process_output", bg, id="p9")
    assert missing.is_error
    assert "No background process 'p9'" in text_of(missing)
    await call("bash", bg, command="sleep 5", background=True)
    bad = await call("process_output", bg, id="p1", filter="(")
    assert bad.is_error
    assert "not a valid regex" in text_of(bad)


async def test_kill_ends_the_whole_group(bg: ToolContext) -> None:
    marker = marker_seconds()
    command = f"sleep {marker} & (sleep {marker} &) ; setsid sleep {marker} & echo up; wait"
    result = await call("bash", bg, command=command, background=True)
    assert not result.is_error
    await wait_until_async(lambda: len(live_processes(marker)) >= 4, 10)
    killed = await call("process_kill", bg, id="p1")
    assert "Stopped [p1: killed" in text_of(killed)
    await wait_until_async(lambda: not live_processes(marker), 10)
    again = await call("process_kill", bg, id="p1")
    assert "Already ended" in text_of(again)


async def test_exit_is_noted_once_unless_the_model_saw_it(bg: ToolContext) -> None:
    table = table_of(bg)
    await call("bash", bg, command="echo bye; exit 2", background=True)
    await call("bash", bg, command="echo seen", background=True)
    await wait_until_async(lambda: not table.live(), 10)
    await call("process_output", bg, id="p2")
    notes = table.take_exit_notes()
    assert len(notes) == 1
    assert "p1" in notes[0]
    assert "exited 2" in notes[0]
    assert "bye" in notes[0]
    assert table.take_exit_notes() == []


async def test_the_cap_is_a_clear_error(work: Path) -> None:
    table = ProcessTable()
    settings = ToolSettings(bash_max_background=2)
    ctx = ToolContext(
        cwd=work, settings=settings, spill_dir=work / ".s", ports=ToolPorts(processes=table)
    )
    try:
        for _ in range(2):
            assert not (await call("bash", ctx, command="sleep 30", background=True)).is_error
        third = await call("bash", ctx, command="sleep 30", background=True)
        assert third.is_error
        assert "already runs 2 background processes" in text_of(third)
        assert "bash_max_background = 2" in text_of(third)
        assert "p1, p2" in text_of(third)
        await call("process_kill", ctx, id="p1")
        assert not (await call("bash", ctx, command="sleep 30", background=True)).is_error
        assert [p.id for p in table.live()] == ["p2", "p3"]
    finally:
        await table.close(0.5)
    assert not table.live()


async def test_closing_the_table_kills_and_refuses_more(bg: ToolContext) -> None:
    marker = marker_seconds()
    await call("bash", bg, command=f"sleep {marker}", background=True)
    await wait_until_async(lambda: live_processes(marker), 10)
    await table_of(bg).close(0.5)
    assert not live_processes(marker)
    refused = await call("bash", bg, command="true", background=True)
    assert refused.is_error
    assert "closing" in text_of(refused)


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def test_a_huge_printer_keeps_memory_bounded(bg: ToolContext) -> None:
    size = int(os.environ.get("AGENTD_TEST_PRINT_BYTES", str(1 << 30)))
    before = _rss()
    peak = before
    await call("bash", bg, command=f"yes 0123456789abcdef | head -c {size}", background=True)
    process = table_of(bg).get("p1")
    deadline = time.monotonic() + scaled(120)
    while process.running and time.monotonic() < deadline:
        peak = max(peak, _rss())
        await asyncio.sleep(0.05)
    assert not process.running
    assert process.total_bytes == size
    assert peak - before < 40 << 20, f"RSS grew by {(peak - before) >> 20} MiB"
    read = await call("process_output", bg, id="p1")
    assert len(text_of(read).encode()) < 60 * 1024
    assert "bytes of output not shown" in text_of(read)
    assert process.spill.path is not None
    assert process.spill.path.stat().st_size == ToolSettings().bash_spill_max_bytes
    streamed = [e for e in bg.events if isinstance(e, ProcessOutput)]  # type: ignore[attr-defined]
    assert sum(len(e.text) for e in streamed) < size // 10  # throttled: bursts dropped


@pytest.mark.skipif(
    not mountns.available() and landlock_abi() == 0, reason="no sandbox on this kernel"
)
async def test_a_sandboxed_background_process_cannot_write_outside(
    short_tmp: Path, work: Path
) -> None:
    outside = short_tmp / "outside"
    outside.mkdir()
    table = ProcessTable()
    ctx = ToolContext(
        cwd=work, workspace=work, session_id="bg-sandbox", ports=ToolPorts(processes=table)
    )
    try:
        command = f"sleep 0.2; echo in > inside.txt; echo x > {outside}/new.txt; echo rc=$?"
        await call("bash", ctx, command=command, background=True)
        read = await call(
            "process_output", ctx, id="p1", wait_ms=int(scaled(20) * 1000), filter="rc="
        )
        assert "rc=1" in text_of(read)
    finally:
        await table.close(0.5)
    assert (work / "inside.txt").read_text() == "in\n"
    assert not (outside / "new.txt").exists()
