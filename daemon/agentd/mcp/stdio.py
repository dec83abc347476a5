"""The stdio transport to an MCP server: the process is spawned *before* the SDK is imported,
and the import (long on a busy machine) runs in a thread while the server starts, so a
session's first server costs about the server's own start-up.

:func:`open_stdio` yields the stream pair the SDK's ``ClientSession`` reads and writes: one
JSON-RPC message per line each way. On exit stdin is closed, the server gets
:data:`GRACE_SECONDS` to leave, then SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

GRACE_SECONDS = 2.0
SDK_MODULES = ("mcp.client.session", "mcp.shared.message", "mcp_types")
MAX_LINE = 64 * 1024 * 1024


def _import_sdk() -> None:
    for name in SDK_MODULES:
        importlib.import_module(name)


@contextlib.asynccontextmanager
async def open_stdio(
    argv: list[str], env: Mapping[str, str], cwd: Path, stderr: int
) -> AsyncIterator[tuple[Any, Any]]:
    """Spawn ``argv`` (stderr to the descriptor ``stderr``) and yield (read, write) streams
    of ``SessionMessage``; OSError when it cannot be spawned."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=dict(env),
        cwd=cwd,
        limit=MAX_LINE,
    )
    try:
        await asyncio.to_thread(_import_sdk)
        import anyio
        from mcp.shared.message import SessionMessage

        read_in, read_out = anyio.create_memory_object_stream[Any](0)
        write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)
        pumps = [
            asyncio.create_task(_read(process, read_in)),
            asyncio.create_task(_write(process, write_out)),
        ]
        try:
            yield read_out, write_in
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            for stream in (read_in, read_out, write_in, write_out):
                stream.close()
    finally:
        await asyncio.shield(_stop(process))


async def _read(process: asyncio.subprocess.Process, sink: Any) -> None:
    """Server lines to the session: a message each, or the parse error; EOF closes it."""
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    assert process.stdout is not None
    async with sink:
        while line := await process.stdout.readline():
            if not line.strip():
                continue
            try:
                item: Any = SessionMessage(jsonrpc_message_adapter.validate_json(line))
            except ValueError as exc:
                item = exc
            await sink.send(item)


async def _write(process: asyncio.subprocess.Process, source: Any) -> None:
    """Session messages to the server's stdin, one line each."""
    assert process.stdin is not None
    async with source:
        async for message in source:
            data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
            process.stdin.write(data.encode() + b"\n")
            await process.stdin.drain()


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Close stdin, wait a little, then SIGTERM and SIGKILL (an exited server is left)."""
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    for signal_it in (None, process.terminate, process.kill):
        if signal_it is not None:
            with contextlib.suppress(ProcessLookupError):
                signal_it()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), GRACE_SECONDS)
            return
