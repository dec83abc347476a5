"""``$/cancel_request`` (not in every ACP client) goes only to editors that ask for it.

On the raw wire of a real ``agentd acp``: a permission request withdrawn because the turn was
cancelled is announced with ``$/cancel_request`` only to an editor that declared
``clientCapabilities._meta.cancelRequest`` (or that sent one itself); others never see the
method.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.acp.conftest import Box
from tests.acp.test_bad_input import Wire, open_wire
from tests.harness import scaled

pytestmark = pytest.mark.e2e


async def _messages_until(wire: Wire, request_id: int) -> list[dict[str, Any]]:
    """Every message up to and including the response to ``request_id``."""
    assert wire.process.stdout is not None
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(scaled(20)):
        while True:
            line = await wire.process.stdout.readline()
            assert line, "agentd acp closed stdout"
            seen.append(json.loads(line))
            if "method" not in seen[-1] and seen[-1].get("id") == request_id:
                return seen


async def _withdrawn_request(box: Box, capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    """Ask for a write in ask mode, cancel the turn while its approval is open; every message
    the editor got from the approval request to the prompt's answer."""
    wire = await open_wire(box)
    try:
        await wire.call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
        new = await wire.call(2, "session/new", {"cwd": str(box.project), "mcpServers": []})
        sid = new["result"]["sessionId"]
        await wire.call(3, "session/set_mode", {"sessionId": sid, "modeId": "ask"})
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "write the report"}]}
        await wire.send({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": prompt})
        seen: list[dict[str, Any]] = []
        assert wire.process.stdout is not None
        while not seen or seen[-1].get("method") != "session/request_permission":
            seen.append(json.loads(await wire.process.stdout.readline()))
        await wire.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
        )
        seen += await _messages_until(wire, 4)
    finally:
        assert wire.process.stdin is not None
        wire.process.stdin.close()
        assert await asyncio.wait_for(wire.process.wait(), scaled(15)) == 0
    assert seen[-1]["result"] == {"stopReason": "cancelled"}
    return seen


async def test_an_editor_that_did_not_ask_never_gets_cancel_request(box: Box) -> None:
    seen = await _withdrawn_request(box, {})
    assert [m for m in seen if m.get("method") == "$/cancel_request"] == []
    assert not (box.project / "report.md").exists()


async def test_an_editor_that_asked_is_told_which_request_was_withdrawn(box: Box) -> None:
    seen = await _withdrawn_request(box, {"_meta": {"cancelRequest": True}})
    asked = next(m for m in seen if m.get("method") == "session/request_permission")
    cancels = [m for m in seen if m.get("method") == "$/cancel_request"]
    assert [c["params"] for c in cancels] == [{"requestId": asked["id"]}]
