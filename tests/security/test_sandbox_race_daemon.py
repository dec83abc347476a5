"""The swap race against the real daemon: a ``sandbox = "workspace"`` session's write, edit
and undo_edit calls, played by the mock LLM, while a folder of the workspace and a symlink
to the outside are exchanged (renameat2 RENAME_EXCHANGE) in a loop — with no editor, and with
an editor (a JSON-RPC client that declared ``fs``) that serves reads only, takes every write
into its buffers, or refuses every request. Nothing may land outside the workspace.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentd.errors import InvalidParams
from agentd.protocol.lifecycle import ClientCapabilities, FileAccessCapabilities
from agentd.protocol.methods import (
    InitializeParams,
    ReadTextFileParams,
    ReadTextFileResult,
    WriteTextFileParams,
)
from agentd.rpc import Router
from tests.harness import IsolatedHome, scaled, spawn_stdio_connection
from tests.scenarios import tool_call

pytestmark = pytest.mark.e2e

AT_FDCWD = -100
RENAME_EXCHANGE = 2
ROUNDS = 75  # four mutating calls each: 300 calls through the swapped folder
TRIGGER = "race the sandbox"


def _race_scenario() -> dict[str, Any]:
    """One reply with ROUNDS x (write, edit, undo_edit, undo_edit) through ``d/``."""
    calls = []
    for index in range(ROUNDS):
        new = f"d/new_{index}.txt"
        edit = {"path": "d/secret.txt", "old_string": "SIDE", "new_string": "SIDE!"}
        calls += [
            tool_call("write", {"path": new, "content": "planted\n"}, f"w{index}"),
            tool_call("edit", edit, f"e{index}"),
            tool_call("undo_edit", {"path": "d/secret.txt"}, f"u{index}"),
            tool_call("undo_edit", {"path": new}, f"n{index}"),
        ]
    steps = [{"response": {"content": "Racing.", "tool_calls": calls}}]
    return {"name": "race", "trigger": TRIGGER, "steps": [*steps, {"response": {"content": "ok"}}]}


@pytest.fixture
def race_home() -> Iterator[tuple[IsolatedHome, Path]]:
    """A home whose project holds ``d/secret.txt`` and a symlink ``l`` to ``outside``."""
    with IsolatedHome() as home:
        outside = home.root / "outside"
        (home.project / "d").mkdir()
        outside.mkdir()
        (home.project / "d" / "secret.txt").write_text("INSIDE\n")
        (outside / "secret.txt").write_text("OUTSIDE\n")
        (home.project / "l").symlink_to(outside)
        home.use_scenarios([_race_scenario()])
        yield home, outside


class Editor:
    """The fs side of a JSON-RPC client: buffers by path (``d/secret.txt`` open as
    "INSIDE"); ``mode`` is ``reads`` (writes not declared: the daemon writes to the disk),
    ``writes`` (every write kept in the buffers) or ``refuses`` (every request answered with
    an error)."""

    def __init__(self, project: Path, mode: str) -> None:
        self.mode = mode
        self.buffers = {str(project / "d" / "secret.txt"): "INSIDE\n"}
        self.requests = 0

    def capabilities(self) -> ClientCapabilities:
        fs = FileAccessCapabilities(read_text_file=True, write_text_file=self.mode != "reads")
        return ClientCapabilities(fs=fs)

    def router(self) -> Router:
        router = Router()
        router.add("fs/readTextFile", self.read, ReadTextFileParams)
        router.add("fs/writeTextFile", self.write, WriteTextFileParams)
        return router

    async def read(self, conn: object, params: ReadTextFileParams) -> ReadTextFileResult:
        self.requests += 1
        if self.mode == "refuses" or params.path not in self.buffers:
            raise InvalidParams(f"{params.path} is not open in the editor")
        return ReadTextFileResult(content=self.buffers[params.path])

    async def write(self, conn: object, params: WriteTextFileParams) -> None:
        self.requests += 1
        if self.mode == "refuses":
            raise InvalidParams("this editor refuses writes")
        self.buffers[params.path] = params.content


def _swap_loop(first: Path, second: Path, stop: threading.Event, swaps: list[int]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    while not stop.is_set():
        libc.renameat2(AT_FDCWD, bytes(first), AT_FDCWD, bytes(second), RENAME_EXCHANGE)
        swaps[0] += 1


async def _race(home: IsolatedHome, editor: Editor | None) -> list[dict[str, Any]]:
    """Run the race prompt in a sandboxed auto session; the tool_execution_end events."""
    ends: list[dict[str, Any]] = []
    router = editor.router() if editor else Router()
    router.on_notification("session/event", lambda _conn, params: _collect(params, ends))
    process, conn = await spawn_stdio_connection(home, router=router)
    caps = editor.capabilities() if editor else ClientCapabilities()
    await conn.request("initialize", InitializeParams(capabilities=caps))
    new = {"cwd": str(home.project), "provider": "mock", "sandbox": "workspace"}
    info = await conn.request("session/new", new | {"permissionMode": "auto"})
    stop, swaps = threading.Event(), [0]
    swapper = threading.Thread(
        target=_swap_loop, args=(home.project / "d", home.project / "l", stop, swaps)
    )
    swapper.start()
    try:
        prompt = {"sessionId": info["sessionId"], "text": TRIGGER}
        await asyncio.wait_for(conn.request("session/prompt", prompt), scaled(240))
    finally:
        stop.set()
        swapper.join()
        await conn.close()
        await asyncio.wait_for(process.wait(), scaled(30))
    assert swaps[0] > ROUNDS, "the race really ran"
    return ends


def _collect(params: Any, ends: list[dict[str, Any]]) -> None:
    if params["event"]["type"] == "tool_execution_end":
        ends.append(params["event"])


@pytest.mark.parametrize("kind", ["no-editor", "reads", "writes", "refuses"])
async def test_sandboxed_daemon_writes_nothing_outside_under_a_swap_race(
    race_home: tuple[IsolatedHome, Path], kind: str
) -> None:
    """300 write/edit/undo_edit calls through the swapped folder: the outside folder keeps
    exactly its one file, unchanged; the calls still work between swaps."""
    home, outside = race_home
    editor = None if kind == "no-editor" else Editor(home.project, kind)
    ends = await _race(home, editor)
    assert len(ends) == 4 * ROUNDS
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "OUTSIDE\n"
    succeeded = [end for end in ends if not end.get("isError")]
    if kind == "refuses":
        assert editor is not None
        assert editor.requests > 0
        writes = [end for end in succeeded if end["name"] in ("write", "edit")]
        assert not writes, json.dumps(writes[:2])  # a refusal is an error, never a disk write
    else:
        assert any(end["name"] == "write" for end in succeeded)
    if kind == "writes":
        assert editor is not None
        assert any(path.endswith(".txt") and "new_" in path for path in editor.buffers)
