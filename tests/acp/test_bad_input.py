"""Bad input to ``agentd acp`` on the raw wire: precise JSON-RPC errors, and the process goes
on serving (and never writes anything but JSON-RPC to stdout)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp.conftest import Box
from tests.harness import scaled, wait_until_async

pytestmark = pytest.mark.e2e


class Wire:
    """``agentd acp`` on pipes: send raw lines, read JSON-RPC messages."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, line: str | dict[str, Any]) -> None:
        assert self.process.stdin is not None
        text = line if isinstance(line, str) else json.dumps(line)
        self.process.stdin.write(text.encode() + b"\n")
        await self.process.stdin.drain()

    async def answer(self, request_id: int | None) -> dict[str, Any]:
        """The next response with ``request_id`` (notifications are skipped)."""
        assert self.process.stdout is not None
        async with asyncio.timeout(scaled(20)):
            while True:
                line = await self.process.stdout.readline()
                assert line, "agentd acp closed stdout"
                message = json.loads(line)
                assert message["jsonrpc"] == "2.0"
                if "method" not in message and message.get("id") == request_id:
                    return message

    async def call(self, request_id: int, method: str, params: Any) -> dict[str, Any]:
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await self.answer(request_id)


async def open_wire(box: Box) -> Wire:
    argv = box.argv()
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=box.env,
        cwd=str(box.project),
    )
    return Wire(process)


async def test_bad_input_gets_precise_errors_and_the_agent_stays_up(box: Box) -> None:
    wire = await open_wire(box)
    try:
        early = await wire.call(1, "session/new", {"cwd": str(box.project), "mcpServers": []})
        assert early["error"]["code"] == -32600
        assert "initialize" in early["error"]["message"]
        ok = await wire.call(2, "initialize", {"protocolVersion": 7})
        assert ok["result"]["protocolVersion"] == 1, "an unknown version gets the latest we speak"
        await wire.send("{this is not json")
        parse = await wire.answer(None)
        assert parse["error"]["code"] == -32700
        bad = await wire.call(3, "session/new", {"cwd": 5, "mcpServers": []})
        assert bad["error"]["code"] == -32602
        assert "cwd" in bad["error"]["message"]
        relative = await wire.call(4, "session/new", {"cwd": "project", "mcpServers": []})
        assert relative["error"]["code"] == -32602
        unknown = await wire.call(5, "session/prompt", {"sessionId": "nope", "prompt": []})
        assert unknown["error"]["code"] == -32002
        missing = await wire.call(6, "session/frobnicate", {})
        assert missing["error"]["code"] == -32601
        session = await wire.call(7, "session/new", {"cwd": str(box.project), "mcpServers": []})
        sid = session["result"]["sessionId"]
        empty = await wire.call(8, "session/prompt", {"sessionId": sid, "prompt": []})
        assert empty["error"]["code"] == -32602
        audio = {"type": "audio", "data": "AA", "mimeType": "audio/wav"}
        refused = await wire.call(9, "session/prompt", {"sessionId": sid, "prompt": [audio]})
        assert refused["error"]["code"] == -32602
        mode = await wire.call(10, "session/set_mode", {"sessionId": sid, "modeId": "yolo"})
        assert mode["error"]["code"] == -32602
        assert "ask, auto, read-only" in mode["error"]["message"]
        option = {"sessionId": sid, "configId": "colour", "value": "red"}
        assert (await wire.call(11, "session/set_config_option", option))["error"]["code"] == -32602
        auth = await wire.call(12, "authenticate", {"methodId": "password"})
        assert auth["result"] == {}, "nothing to authenticate: a no-op"
        unknown_load = {"sessionId": "nope", "cwd": str(box.project), "mcpServers": []}
        assert (await wire.call(13, "session/load", unknown_load))["error"]["code"] == -32002
        text = {"type": "text", "text": "hi"}
        done = await wire.call(14, "session/prompt", {"sessionId": sid, "prompt": [text]})
        assert done["result"] == {"stopReason": "end_turn"}
        assert wire.process.returncode is None
    finally:
        assert wire.process.stdin is not None
        wire.process.stdin.close()
        assert await asyncio.wait_for(wire.process.wait(), scaled(15)) == 0


async def test_cancel_request_answers_the_prompt_with_32800(box: Box) -> None:
    """``$/cancel_request`` on a running ``session/prompt``: the answer is -32800 and the run
    stops (the next prompt runs at once)."""
    wire = await open_wire(box)
    try:
        await wire.call(1, "initialize", {"protocolVersion": 1})
        session = await wire.call(2, "session/new", {"cwd": str(box.project), "mcpServers": []})
        sid = session["result"]["sessionId"]
        slow = {"sessionId": sid, "prompt": [{"type": "text", "text": "stream slowly"}]}
        await wire.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": slow})
        await wire.send(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}}
        )
        cancelled = await wire.answer(3)
        assert cancelled["error"]["code"] == -32800
        hi = {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}
        done = await wire.call(4, "session/prompt", hi)
        assert done["result"] == {"stopReason": "end_turn"}
    finally:
        assert wire.process.stdin is not None
        wire.process.stdin.close()
        assert await asyncio.wait_for(wire.process.wait(), scaled(15)) == 0


async def test_an_unreachable_shared_daemon_is_a_clear_error(box: Box) -> None:
    """``--shared`` with a socket where no daemon can start: -32603 naming the socket, and
    ``agentd acp`` keeps answering."""
    argv = box.argv("--shared", "--socket", "/proc/no-such-dir/agentd.sock")
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=box.env,
    )
    wire = Wire(process)
    try:
        assert "result" in await wire.call(1, "initialize", {"protocolVersion": 1})
        failed = await wire.call(2, "session/new", {"cwd": str(box.project), "mcpServers": []})
        assert failed["error"]["code"] == -32603
        assert "cannot reach agentd" in failed["error"]["message"]
        assert "/proc/no-such-dir/agentd.sock" in failed["error"]["message"]
        listed = await wire.call(3, "session/list", {})
        assert listed["error"]["code"] == -32603
    finally:
        assert process.stdin is not None
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), scaled(10)) == 0


async def test_closing_stdin_mid_run_stops_the_run_and_exits(box: Box) -> None:
    """The editor goes away while a command runs: the run is cancelled (the command killed),
    the session file keeps what happened, and ``agentd acp`` exits 0 promptly."""
    wire = await open_wire(box)
    await wire.call(1, "initialize", {"protocolVersion": 1})
    session = await wire.call(2, "session/new", {"cwd": str(box.project), "mcpServers": []})
    sid = session["result"]["sessionId"]
    slow = {"sessionId": sid, "prompt": [{"type": "text", "text": "wait a long time"}]}
    await wire.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": slow})
    assert wire.process.stdout is not None
    async with asyncio.timeout(scaled(30)):
        while b"started" not in await wire.process.stdout.readline():
            pass
    assert wire.process.stdin is not None
    wire.process.stdin.close()
    assert await asyncio.wait_for(wire.process.wait(), scaled(15)) == 0
    stored = next(Path(box.env["XDG_DATA_HOME"]).rglob(f"*_{sid}.jsonl")).read_text()
    assert "call_sleep" in stored
    assert '"toolName":"bash"' in stored
    # The kill is sent before the exit; the killed processes may take a moment to be gone.
    try:
        await wait_until_async(
            lambda: _processes_in(box.project) == [], what="the command killed with the run"
        )
    except TimeoutError:
        left = [_command_line(pid) for pid in _processes_in(box.project)]
        raise AssertionError(f"still running in the project: {left}") from None


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return f"{pid} (gone)"


def _processes_in(directory: Path) -> list[int]:
    """Pids of the processes whose working directory is ``directory``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cwd").readlink() == directory:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--socket", "/tmp/x.sock"], "--socket needs --shared"),
        (["--permission-mode", "yolo"], "invalid choice: 'yolo'"),
    ],
)
def test_usage_errors_exit_2(box: Box, args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentd", "acp", *args],
        env=box.env,
        capture_output=True,
        text=True,
        timeout=scaled(30),
        check=False,
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stdout == ""


async def test_a_malformed_permission_answer_is_a_refusal(box: Box) -> None:
    """An editor that answers ``session/request_permission`` with something that is not an
    outcome: the call is refused, the run goes on and ends normally."""
    argv = box.argv("--permission-mode", "ask")
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=box.env,
        cwd=str(box.project),
    )
    wire = Wire(process)
    assert process.stdout is not None
    try:
        await wire.call(1, "initialize", {"protocolVersion": 1})
        session = await wire.call(2, "session/new", {"cwd": str(box.project), "mcpServers": []})
        sid = session["result"]["sessionId"]
        text = {"type": "text", "text": "write the report"}
        await wire.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": sid, "prompt": [text]},
            }
        )
        async with asyncio.timeout(scaled(20)):
            while True:
                message = json.loads(await process.stdout.readline())
                if message.get("method") == "session/request_permission":
                    break
        await wire.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": "yes"}})
        done = await wire.answer(3)
        assert done["result"] == {"stopReason": "end_turn"}
        assert not (box.project / "report.md").exists()
    finally:
        assert process.stdin is not None
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), scaled(10)) == 0
