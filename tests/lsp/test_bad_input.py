"""Bad input gets a proper LSP error and the server stays up: an unknown command, a missing
or malformed argument, an unknown method, a malformed message."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.harness import scaled
from tests.lsp.conftest import Box, Editor, spawn

BAD_ARGUMENTS: list[tuple[str, list[Any] | None, str]] = [
    ("agentd.prompt", None, "takes one argument"),
    ("agentd.prompt", [], "takes one argument"),
    ("agentd.prompt", [{"prompt": "a"}, {"prompt": "b"}], "takes one argument"),
    ("agentd.prompt", ["just a string"], "Expected `object`"),
    ("agentd.prompt", [{}], "missing required field `prompt`"),
    ("agentd.prompt", [{"prompt": 5}], "Expected `str`"),
    ("agentd.prompt", [{"prompt": ""}], "length >= 1"),
    ("agentd.prompt", [{"prompt": "x", "range": {"start": 1}}], "Expected `object`"),
    ("agentd.prompt", [{"prompt": "x", "colour": "red"}], "unknown field `colour`"),
    ("agentd.steer", [{"sessionId": "x"}], "missing required field `prompt`"),
    ("agentd.cancel", [{"sessionId": 3}], "Expected `str | null`"),
]


async def test_unknown_commands_and_malformed_arguments_are_invalid_params(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor):
        with pytest.raises(JsonRpcException) as unknown:
            await editor.run("agentd.nope", {})
        assert unknown.value.code == -32602
        assert "unknown command 'agentd.nope'" in unknown.value.message
        for command, arguments, expected in BAD_ARGUMENTS:
            params = types.ExecuteCommandParams(command=command, arguments=arguments)
            with pytest.raises(JsonRpcException) as bad:
                await editor.client.workspace_execute_command_async(params)
            assert bad.value.code == -32602, (command, arguments)
            assert expected in bad.value.message, (bad.value.message, expected)
            assert "Traceback" not in bad.value.message
            assert bad.value.data is None  # no traceback for the client
        with pytest.raises(JsonRpcException) as no_session:
            await editor.run("agentd.steer", {"prompt": "no run here"})
        assert no_session.value.code == -32602
        with pytest.raises(JsonRpcException) as no_method:
            await editor.client.protocol.send_request_async("agentd/unknown", {})
        assert no_method.value.code == -32601
        answer = await editor.run("agentd.prompt", {"prompt": "hello world"})  # still serving
        assert answer["stopReason"] == "end_turn"
    stderr = box.lsp_log.read_text()
    assert "Traceback" not in stderr


def _frame(message: dict[str, Any] | bytes) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def _answer(stdout: asyncio.StreamReader, wanted_id: int) -> dict[str, Any]:
    """The response to ``wanted_id`` (notifications and other messages skipped)."""
    while True:
        length = 0
        while (line := await stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message = json.loads(await stdout.readexactly(length))
        if message.get("id") == wanted_id:
            return dict(message)


async def test_a_malformed_message_does_not_stop_the_server(box: Box) -> None:
    """…and the logs split: warnings on stderr (a few lines), everything in the log file."""
    with box.stderr.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *box.argv(),
            env=box.env,
            cwd=box.project,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(_frame(b"{not json at all"))
        process.stdin.write(
            _frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"capabilities": {}, "processId": None},
                }
            )
        )
        answer = await asyncio.wait_for(_answer(process.stdout, 1), scaled(30))
        assert answer["result"]["serverInfo"]["name"] == "agentd"
        unknown = {"command": "agentd.nope", "arguments": [{}]}
        process.stdin.write(
            _frame(
                {"jsonrpc": "2.0", "id": 9, "method": "workspace/executeCommand", "params": unknown}
            )
        )
        refused = await asyncio.wait_for(_answer(process.stdout, 9), scaled(30))
        assert refused["error"]["code"] == -32602
        # params that do not fit the method, or none: answered -32602 (stock pygls never answers)
        process.stdin.write(
            _frame({"jsonrpc": "2.0", "id": 10, "method": "textDocument/codeAction", "params": {}})
        )
        process.stdin.write(
            _frame({"jsonrpc": "2.0", "id": 11, "method": "workspace/executeCommand"})
        )
        unfit = await asyncio.wait_for(_answer(process.stdout, 10), scaled(30))
        assert unfit["error"]["code"] == -32602
        assert "required field missing @ message.params.text_document" in unfit["error"]["message"]
        missing = await asyncio.wait_for(_answer(process.stdout, 11), scaled(30))
        assert missing["error"]["code"] == -32602
        assert "data" not in missing["error"]  # no traceback
        for n in range(200):  # what editors send all day: none of it may reach stderr
            process.stdin.write(
                _frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": n}})
            )
            process.stdin.write(
                _frame({"jsonrpc": "2.0", "method": "$/unknownThing", "params": {"n": n}})
            )
        process.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        assert "error" not in await asyncio.wait_for(_answer(process.stdout, 2), scaled(30))
        process.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        assert await asyncio.wait_for(process.wait(), scaled(30)) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    on_stderr = [json.loads(line) for line in box.stderr.read_text().splitlines()]
    in_file = [json.loads(line) for line in box.lsp_log.read_text().splitlines()]
    assert [e["event"] for e in on_stderr] == ["LSP message not handled"]
    assert all(e["level"] in ("warning", "error", "critical") for e in on_stderr)
    assert {"LSP message not handled", "LSP request failed"} <= {e["event"] for e in in_file}
    unknown_cancels = [e for e in in_file if "Cancel notification for unknown" in e["event"]]
    assert len(unknown_cancels) == 200  # pygls' warnings: in the file, as info
    assert {e["level"] for e in unknown_cancels} == {"info"}


async def test_closing_stdin_cancels_the_run_and_ends_the_server(box: Box) -> None:
    """An editor that goes away without ``shutdown``: the run is cancelled, the session file
    flushed, the process exits."""
    with box.stderr.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *box.argv(),
            env=box.env,
            cwd=box.project,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        init = {"capabilities": {}, "processId": None, "rootUri": box.project.as_uri()}
        process.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                    "params": init}))  # fmt: skip
        await asyncio.wait_for(_answer(process.stdout, 1), scaled(30))
        prompt = {"command": "agentd.prompt", "arguments": [{"prompt": "wait a long time"}]}
        run = {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": prompt}
        process.stdin.write(_frame(run))
        sessions = box.sessions

        def started() -> bool:
            return any("echo started" in f.read_text() for f in sessions.rglob("*.jsonl"))

        async with asyncio.timeout(scaled(30)):
            while not started():
                await asyncio.sleep(0.05)
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), scaled(30)) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    [session_file] = list(box.sessions.rglob("*.jsonl"))
    assert "the run was cancelled before this tool call finished" in session_file.read_text()


def test_socket_needs_shared(box: Box) -> None:
    done = box.run_agentd("lsp", "--socket", str(box.root / "s.sock"))
    assert done.returncode == 2
    assert b"--socket needs --shared" in done.stderr
    assert done.stdout == b""
