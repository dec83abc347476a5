"""A hostile stdio MCP server (:mod:`tests.mcp.oversize_server`, a real process): an answer
longer than agentd takes fails its call at once with the limit named — not after the tool
timeout — and the server stays usable; an answer under the limit arrives whole."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.mcp.connection import CallFailed, Connection
from agentd.mcp.servers import ServerDef
from agentd.mcp.stdio import MAX_MESSAGE_BYTES
from tests.harness import scaled

HOSTILE = Path(__file__).with_name("oversize_server.py")
TOOL_TIMEOUT = 600.0
"""The calls' own timeout: far longer than any deadline of these tests."""


@pytest.fixture
async def hostile(tmp_path: Path) -> AsyncIterator[Connection]:
    definition = ServerDef(
        name="h",
        source="test",
        command=sys.executable,
        args=(str(HOSTILE),),
        startup_timeout=scaled(30),
    )
    connection = Connection(definition, tmp_path, dict(os.environ), lambda: None, lambda: None)
    await connection.start()
    try:
        yield connection
    finally:
        await connection.stop()


async def _call(connection: Connection, tool: str, **arguments: object) -> dict[str, object]:
    async with asyncio.timeout(scaled(30)):  # what "at once" allows on a loaded machine
        return await connection.call(tool, dict(arguments), TOOL_TIMEOUT)


@pytest.mark.parametrize("tool", ["big", "garbage"])
async def test_a_line_over_the_frame_limit_fails_the_call_at_once(
    hostile: Connection, tool: str
) -> None:
    with pytest.raises(CallFailed, match="exceeds the limit of"):
        await _call(hostile, tool, mib=70)  # over the JSON-RPC frame limit (64 MiB)
    assert (await _call(hostile, "echo", text="still here"))["content"] == [
        {"type": "text", "text": "still here"}
    ]


async def test_a_result_far_over_the_mcp_limit_is_refused_not_decoded(
    hostile: Connection,
) -> None:
    assert MAX_MESSAGE_BYTES <= 16 * 1024 * 1024
    with pytest.raises(CallFailed, match=f"exceeds the limit of {MAX_MESSAGE_BYTES} bytes"):
        await _call(hostile, "big", mib=60)
    assert (await _call(hostile, "echo", text="ok"))["content"][0]["text"] == "ok"  # type: ignore[index]


async def test_a_big_result_under_the_limit_arrives_whole(hostile: Connection) -> None:
    mib = 3
    assert mib * 1024 * 1024 < MAX_MESSAGE_BYTES
    result = await _call(hostile, "big", mib=mib)
    (content,) = result["content"]  # type: ignore[misc]
    text = content["text"]
    assert len(text) > 2 * 1024 * 1024
    assert set(text.split("\n")[:-1]) == {'a "quoted" line'}  # decoded, escapes and all
