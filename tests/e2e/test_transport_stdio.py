"""``agentd --stdio`` as a real child process: both framings, stdout purity, exit on EOF."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from agentd.protocol.methods import DaemonStatusResult, InitializeParams, InitializeResult
from tests.harness import IsolatedHome, scaled, spawn_stdio_connection

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("framing", ["ndjson", "content-length"])
async def test_initialize_status_and_exit_zero_on_eof(sandbox: IsolatedHome, framing: str) -> None:
    """A client in either framing initializes and calls; closing stdin ends the daemon with 0."""
    process, conn = await spawn_stdio_connection(sandbox, framing=framing)
    init = await conn.request("initialize", InitializeParams(), result_type=InitializeResult)
    assert init.server_info.name == "agentd"
    status = await conn.request("daemon/status", result_type=DaemonStatusResult)
    assert status.transport == "stdio"
    assert status.pid == process.pid
    assert status.connections == 1
    await conn.close()
    assert await process.wait() == 0


def _frames_content_length(data: bytes) -> list[bytes]:
    frames = []
    while data:
        header, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"trailing bytes that are not a frame: {data[:80]!r}"
        name, _, value = header.partition(b":")
        assert name == b"Content-Length"
        length = int(value)
        frames.append(rest[:length])
        data = rest[length:]
    return frames


REQUESTS = [
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"t"}}}',
    b'{"jsonrpc":"2.0","id":2,"method":"daemon/status"}',
    b"this is not json",
    b'[{"jsonrpc":"2.0","id":3,"method":"daemon/status"}]',
    b'{"jsonrpc":"2.0","id":4,"method":"no/such/method"}',
    b'{"jsonrpc":"2.0","id":5,"method":"session/state","params":{"bogus":1}}',
    b'{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":99}}',
    b'{"jsonrpc":"2.0","id":"last","method":"daemon/status"}',
]


def _run_requests(cwd: str) -> list[bytes]:
    """A whole agent run, pipelined: a new session in ``cwd`` and a prompt for the mock LLM."""
    new = {"cwd": cwd, "provider": "mock", "sessionId": "s1", "permissionMode": "auto"}
    prompt = {"sessionId": "s1", "text": "hello world"}
    return [
        json.dumps({"jsonrpc": "2.0", "id": 6, "method": "session/new", "params": new}).encode(),
        json.dumps(
            {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": prompt}
        ).encode(),
    ]


@pytest.mark.parametrize("framing", ["ndjson", "content-length"])
def test_every_stdout_byte_belongs_to_a_frame(sandbox: IsolatedHome, framing: str) -> None:
    """A whole exchange, an agent run with a bash tool call included, at debug log level:
    stdout holds only protocol frames, and the logs go to stderr as JSON lines."""
    work = sandbox.root / "work"
    work.mkdir()
    requests = REQUESTS + _run_requests(str(work))
    if framing == "ndjson":
        wire = b"".join(request + b"\n" for request in requests)
    else:
        wire = b"".join(b"Content-Length: %d\r\n\r\n%b" % (len(r), r) for r in requests)
    result = sandbox.run_agentd("--stdio", "--log-level", "debug", input=wire)
    assert result.returncode == 0, result.stderr.decode()
    if framing == "ndjson":
        assert result.stdout.endswith(b"\n")
        frames = result.stdout[:-1].split(b"\n")
    else:
        frames = _frames_content_length(result.stdout)
    messages = [json.loads(frame) for frame in frames]
    assert all(message["jsonrpc"] == "2.0" for message in messages)
    events = [m["params"] for m in messages if m.get("method") == "session/event"]
    messages = [m for m in messages if "method" not in m]
    by_id = {message["id"]: message for message in messages}
    assert len(messages) == 9  # every request answered once; the notification is not
    assert by_id[7]["result"]["stopReason"] == "end_turn"
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    types = [event["event"]["type"] for event in events]
    assert types[0] == "agent_start"
    assert types[-1] == "agent_end"
    assert {"message_update", "tool_execution_start", "tool_execution_end"} <= set(types)
    started = [e["event"]["name"] for e in events if e["event"]["type"] == "tool_execution_start"]
    assert started == ["write", "bash"]
    assert (work / "hello.py").exists()
    assert by_id[1]["result"]["serverInfo"]["name"] == "agentd"
    assert by_id["last"]["result"]["transport"] == "stdio"
    assert by_id[4]["error"]["code"] == -32601
    assert by_id[5]["error"]["code"] == -32602
    assert "bogus" in by_id[5]["error"]["message"]
    assert sorted(m["error"]["code"] for m in messages if m["id"] is None) == [-32700, -32600]
    logs = [json.loads(line) for line in result.stderr.decode().splitlines()]
    assert any(line["level"] == "debug" for line in logs)
    assert any(line["event"] == "daemon stopped" for line in logs)


def test_stray_writes_to_descriptor_one_cannot_reach_the_protocol_stream(
    sandbox: IsolatedHome,
) -> None:
    """After detach_stdio, print() and raw fd-1 writes land on stderr."""
    code = (
        "import os\n"
        "from agentd.stdio import detach_stdio\n"
        "fd_in, fd_out = detach_stdio()\n"
        "print('stray print')\n"
        "os.write(1, b'raw fd1 write\\n')\n"
        "os.write(fd_out, b'protocol\\n')\n"
        "assert os.read(0, 10) == b''\n"
        "assert os.read(fd_in, 100) == b'input'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=b"input",
        capture_output=True,
        check=False,
        timeout=scaled(30),
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout == b"protocol\n"
    assert b"stray print" in result.stderr
    assert b"raw fd1 write" in result.stderr


def test_regular_files_work_as_stdin_and_stdout(sandbox: IsolatedHome) -> None:
    """``agentd --stdio < requests > answers`` works although files cannot be polled."""
    requests = sandbox.root / "requests.jsonl"
    answers = sandbox.root / "answers.jsonl"
    requests.write_bytes(REQUESTS[0] + b"\n" + REQUESTS[1] + b"\n")
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        process = subprocess.run(
            sandbox.agentd("--stdio"),
            env=sandbox.env,
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            check=False,
            timeout=scaled(30),
        )
    assert process.returncode == 0
    lines = [json.loads(line) for line in answers.read_bytes().splitlines()]
    assert [line["id"] for line in lines] == [1, 2]


def test_dev_null_as_stdin_or_stdout(sandbox: IsolatedHome) -> None:
    """/dev/null cannot be polled: stdin from it is an immediate EOF (exit 0), and answers
    written to it are discarded without stalling the daemon."""
    empty = subprocess.run(
        sandbox.agentd("--stdio"),
        env=sandbox.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        timeout=scaled(30),
    )
    assert empty.returncode == 0
    assert empty.stdout == b""
    requests = sandbox.root / "requests.jsonl"
    requests.write_bytes(REQUESTS[0] + b"\n" + REQUESTS[1] + b"\n")
    with requests.open("rb") as stdin, open(os.devnull, "wb") as devnull:
        discarded = subprocess.run(
            sandbox.agentd("--stdio"),
            env=sandbox.env,
            stdin=stdin,
            stdout=devnull,
            stderr=subprocess.DEVNULL,
            check=False,
            timeout=scaled(30),
        )
    assert discarded.returncode == 0


def test_serve_stdio_is_the_same_as_the_alias(sandbox: IsolatedHome) -> None:
    """``agentd serve --stdio`` answers like ``agentd --stdio``."""
    result = sandbox.run_agentd("serve", "--stdio", input=REQUESTS[1] + b"\n")
    assert result.returncode == 0
    assert json.loads(result.stdout)["result"]["transport"] == "stdio"


def test_only_daemon_status_is_allowed_before_initialize(sandbox: IsolatedHome) -> None:
    """-32004 before initialize (except daemon/status); a second initialize is -32600."""
    wire = [
        b'{"jsonrpc":"2.0","id":1,"method":"daemon/status"}',
        b'{"jsonrpc":"2.0","id":2,"method":"models/list"}',
        b'{"jsonrpc":"2.0","id":3,"method":"initialize"}',
        b'{"jsonrpc":"2.0","id":4,"method":"initialize"}',
        b'{"jsonrpc":"2.0","id":5,"method":"session/state","params":{"sessionId":"none"}}',
    ]
    result = sandbox.run_agentd("--stdio", input=b"\n".join(wire) + b"\n")
    replies = {m["id"]: m for m in map(json.loads, result.stdout.splitlines())}
    assert "result" in replies[1]
    assert replies[2]["error"]["code"] == -32004
    assert "result" in replies[3]
    assert replies[4]["error"]["code"] == -32600
    assert replies[5]["error"]["code"] != -32004


def test_mock_llm_subcommand_is_delegated(sandbox: IsolatedHome) -> None:
    """``agentd mock-llm --help`` reaches the mock LLM server's own parser."""
    result = sandbox.run_agentd("mock-llm", "--help")
    assert result.returncode == 0
    assert b"mock-llm" in result.stdout
