"""The ACP test harness: the official ACP Python SDK as the editor, spawning ``agentd acp``.

:class:`Box` is an isolated home (XDG directories, a project, the scripted mock LLM's
scenarios from ``scenarios.json``). :class:`Editor` is an ACP client like an editor's: it
records every ``session/update``, answers permission requests with a chosen option, and —
when created with ``fs=True`` — serves ``fs/read_text_file`` / ``fs/write_text_file`` from
its own buffers (falling back to the disk for reads), as an editor with unsaved changes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

import acp
from tests.harness import IsolatedHome, scaled

HERE = Path(__file__).parent
SCENARIOS = HERE / "scenarios.json"


class Box(IsolatedHome):
    """An isolated home for one test (:mod:`tests.harness`) whose mock LLM plays
    ``scenarios.json``; its cleanup stops a daemon that ``agentd acp --shared`` started."""

    prefix = "acp-"

    def __init__(self) -> None:
        super().__init__()
        self.env["AGENTD_MOCK_SCENARIOS"] = str(SCENARIOS)

    def argv(self, *extra: str) -> list[str]:
        """``agentd acp`` with the mock provider and ``extra`` options."""
        return self.agentd("acp", "--provider", "mock", *extra)

    def write_config(self, text: str) -> None:
        self.user_config(text)


@pytest.fixture
def box() -> Iterator[Box]:
    with Box() as made:
        yield made


@dataclass
class Editor:
    """An ACP client that records updates and answers like an editor (see module docstring)."""

    permission: str | Callable[[Any], str] = "allow_once"
    fs: bool = False
    buffers: dict[str, str] = field(default_factory=dict)
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permission_requests: list[Any] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def capabilities(self) -> ClientCapabilities:
        fs = FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs)
        return ClientCapabilities(fs=fs)

    # --- the acp.Client interface --------------------------------------------------------

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.changed.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append((tool_call, options))
        self.changed.set()
        choice = self.permission(tool_call) if callable(self.permission) else self.permission
        if choice == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if choice == "wait":
            await asyncio.sleep(3600)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except FileNotFoundError:
            raise acp.RequestError.resource_not_found(path) from None

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    # --- helpers for tests -----------------------------------------------------------------

    def kinds(self) -> list[str]:
        """The ``sessionUpdate`` tag of every update so far, in order."""
        return [update.session_update for _, update in self.updates]

    def of(self, kind: str) -> list[Any]:
        return [update for _, update in self.updates if update.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind) if u.content.type == "text")

    async def wait_for(self, condition: Callable[[], bool], timeout: float = 20) -> None:
        async with asyncio.timeout(scaled(timeout)):
            while not condition():
                self.changed.clear()
                await self.changed.wait()


@contextlib.asynccontextmanager
async def spawn(
    box: Box, editor: Editor, *extra: str
) -> AsyncIterator[tuple[acp.ClientSideConnection, asyncio.subprocess.Process]]:
    """``agentd acp`` spawned by the SDK, initialized with the editor's capabilities."""
    argv = box.argv(*extra)
    async with acp.spawn_agent_process(
        editor, argv[0], *argv[1:], env=box.env, cwd=str(box.project)
    ) as (conn, process):
        await conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
        yield conn, process
