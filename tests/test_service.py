"""The session service in-process, as an ACP or web front-end uses it: no JSON-RPC anywhere.

Real session files in a tmp dir, the real agent, tools and HTTP provider against the built-in
mock LLM; the front-end is a :class:`QueueSubscriber`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.api.subscriber import QueueSubscriber
from agentd.errors import (
    InvalidParams,
    SessionBusy,
    SessionIdle,
    SessionNotFound,
    StoreWriteFailed,
)
from agentd.protocol.content import AssistantMessage
from agentd.protocol.events import (
    AgentEnd,
    MessageEnd,
    PermissionRequest,
    PermissionResolved,
    SessionEvent,
    SessionWarning,
)
from agentd.protocol.methods import (
    MessagesParams,
    PermissionAnswerParams,
    PromptParams,
    RequestPermissionParams,
    SessionDeleteParams,
    SessionExportParams,
    SessionForkParams,
    SessionIdParams,
    SessionListParams,
    SessionLoadParams,
    SessionNewParams,
    SessionNoteParams,
    SessionRenameParams,
    SessionTextParams,
    SubscribeParams,
)
from agentd.session.files import ClientFiles
from agentd.session.service import SessionService
from agentd.store import SessionFile
from tests.harness import scaled


@pytest.fixture
async def service(xdg_home: Path) -> AsyncIterator[SessionService]:
    service = SessionService(session_dir=xdg_home / "sessions")
    try:
        yield service
    finally:
        await service.close()


def answer(session_id: str, tool_call_id: str) -> PermissionAnswerParams:
    return PermissionAnswerParams(
        session_id=session_id, tool_call_id=tool_call_id, outcome="allow_once"
    )


@pytest.fixture
def project(xdg_home: Path) -> Path:
    path = xdg_home / "project"
    path.mkdir()
    return path


async def until(queue: QueueSubscriber, kind: type) -> list[SessionEvent]:
    """Events read from ``queue`` up to and including the first of type ``kind``."""
    seen: list[SessionEvent] = []
    async with asyncio.timeout(scaled(30)):
        async for item in queue.events():
            seen.append(item)
            if isinstance(item.event, kind):
                return seen
    raise AssertionError(f"queue closed before {kind.__name__}")


def new(project: Path, **kw: object) -> SessionNewParams:
    return SessionNewParams(cwd=str(project), provider="mock", **kw)  # type: ignore[arg-type]


async def test_prompt_streams_numbered_events_to_a_queue(
    service: SessionService, project: Path
) -> None:
    """A run's events reach an in-process subscriber in order, numbered from 1."""
    queue = QueueSubscriber()
    info = await service.create(new(project), queue)
    result = await service.prompt(PromptParams(session_id=info.session_id, text="hello world"))
    seen = await until(queue, AgentEnd)
    assert result.stop_reason == "end_turn"
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))
    assert (project / "hello.py").exists()
    messages = (await service.messages(MessagesParams(session_id=info.session_id))).messages
    assert isinstance(messages[-1], AssistantMessage)


async def test_subscribe_since_seq_replays_what_was_missed(
    service: SessionService, project: Path
) -> None:
    info = await service.create(new(project))
    await service.prompt(PromptParams(session_id=info.session_id, text="how are you"))
    late = QueueSubscriber()
    result = await service.subscribe(SubscribeParams(session_id=info.session_id, since_seq=2), late)
    assert result.complete
    assert result.replayed == result.last_seq - 2
    first = late.get_nowait()
    assert first is not None
    assert first.seq == 3
    assert (await service.unsubscribe(SessionIdParams(session_id=info.session_id), late)).ok
    assert not (await service.unsubscribe(SessionIdParams(session_id=info.session_id), late)).ok


async def test_an_in_process_front_end_answers_permission_requests(
    service: SessionService, project: Path
) -> None:
    """A subscriber with ``ask`` is an approval client: its answer decides the tool call."""
    asked: list[RequestPermissionParams] = []

    async def ask(params: RequestPermissionParams) -> str:
        asked.append(params)
        return "reject_once"

    queue = QueueSubscriber(ask=ask)  # type: ignore[arg-type]
    info = await service.create(new(project, permission_mode="ask"), queue)
    await service.prompt(PromptParams(session_id=info.session_id, text="hello world"))
    events = [e.event for e in await until(queue, AgentEnd)]
    assert asked
    assert asked[0].tool == "write"
    resolved = [e for e in events if isinstance(e, PermissionResolved)]
    assert resolved[0].outcome == "reject_once"
    assert not (project / "hello.py").exists()


async def test_answer_permission_decides_a_pending_request(
    service: SessionService, project: Path
) -> None:
    """A front-end that sees ``permission_request`` may answer through the service."""
    queue = QueueSubscriber(answers_permissions=True)
    info = await service.create(new(project, permission_mode="ask"), queue)
    sid = info.session_id
    run = await service.start_prompt(PromptParams(session_id=sid, text="hello world"), queue)
    assert not (await service.answer_permission(answer(sid, "no-such-call"))).ok
    answered: list[str] = []
    async with asyncio.timeout(scaled(30)):
        async for item in queue.events():
            if isinstance(item.event, PermissionRequest):
                answered.append(item.event.tool)
                assert (await service.answer_permission(answer(sid, item.event.tool_call_id))).ok
            if isinstance(item.event, AgentEnd):
                break
    result = await run.result()
    assert result.stop_reason == "end_turn"
    assert answered == ["write", "bash"]
    assert (project / "hello.py").exists()


async def test_store_operations_and_their_errors(service: SessionService, project: Path) -> None:
    queue = QueueSubscriber()
    info = await service.create(new(project, title="first"), queue)
    sid = info.session_id
    await service.prompt(PromptParams(session_id=sid, text="how are you"))
    await service.rename(SessionRenameParams(session_id=sid, title="renamed"))
    listed = (await service.list(SessionListParams())).sessions
    assert [(s.session_id, s.title, s.loaded) for s in listed] == [(sid, "renamed", True)]
    fork = await service.fork(SessionForkParams(session_id=sid))
    assert fork.session_id != sid
    assert len((await service.messages(MessagesParams(session_id=fork.session_id))).messages) == 2
    assert "how are you" in (await service.export(SessionExportParams(session_id=sid))).content
    assert (
        "<html"
        in (
            await service.export(SessionExportParams(session_id=sid, format="html"))
        ).content.lower()
    )
    await service.close_session(SessionIdParams(session_id=sid))
    loaded = await service.load(SessionLoadParams(session_id=sid, replay=True), queue)
    assert loaded.message_count == 2
    await service.delete(SessionDeleteParams(session_id=fork.session_id))
    with pytest.raises(SessionNotFound):
        await service.state(SessionIdParams(session_id=fork.session_id))
    with pytest.raises(SessionIdle):
        await service.steer(SessionTextParams(session_id=sid, text="too late"))
    with pytest.raises(InvalidParams):
        await service.note(SessionNoteParams(session_id=sid, text="  "))


async def test_a_busy_session_refuses_a_second_prompt_until_cancelled(
    service: SessionService, project: Path
) -> None:
    info = await service.create(new(project))
    sid = info.session_id
    run = await service.start_prompt(PromptParams(session_id=sid, text="loop forever"))
    with pytest.raises(SessionBusy):
        await service.start_prompt(PromptParams(session_id=sid, text="again"))
    cancelled = await service.cancel(SessionIdParams(session_id=sid))
    assert cancelled.cancelled
    assert (await run.result()).stop_reason == "cancelled"
    state = await service.state(SessionIdParams(session_id=sid))
    assert state.status == "idle"


async def test_replayed_history_comes_before_live_events(
    service: SessionService, project: Path
) -> None:
    info = await service.create(new(project))
    await service.prompt(PromptParams(session_id=info.session_id, text="how are you"))
    await service.close_session(SessionIdParams(session_id=info.session_id))
    queue = QueueSubscriber()
    await service.load(SessionLoadParams(session_id=info.session_id, replay=True), queue)
    first = queue.get_nowait()
    assert first is not None
    assert first.seq == 0
    assert isinstance(first.event, MessageEnd)


class HeldSync(SessionFile):
    """A session file whose fsync waits until the test releases it, or fails (a disk that
    accepts writes but cannot flush them)."""

    release = threading.Event()
    fail = False

    def sync(self) -> None:
        if not self.release.wait(scaled(30)):
            raise AssertionError("fsync never released")
        if self.fail:
            self._unsynced = False
            raise StoreWriteFailed("write failed: Input/output error")
        super().sync()


async def _held(service: SessionService, session_id: str) -> type[HeldSync]:
    runtime = await service._manager().get(session_id)
    held = type("Held", (HeldSync,), {"release": threading.Event()})
    runtime.file.__class__ = held
    return held


async def test_the_prompt_answer_does_not_wait_for_the_fsync(
    service: SessionService, project: Path
) -> None:
    """The answer comes once the run's entries are written; the last fsync finishes after
    it, and a shutdown waits for it."""
    info = await service.create(new(project))
    held = await _held(service, info.session_id)
    prompt = PromptParams(session_id=info.session_id, text="how are you")
    result = await asyncio.wait_for(service.prompt(prompt), scaled(20))
    assert result.stop_reason == "end_turn"
    assert not held.release.is_set()  # answered while the fsync is still held
    path = Path(info.path)
    assert "how are you" in path.read_text()  # written, so it survives a killed daemon
    closing = asyncio.ensure_future(service.close())
    await asyncio.sleep(0.2)  # a period close() must spend waiting: the behaviour under test
    assert not closing.done()  # shutdown waits for the fsync
    held.release.set()
    await asyncio.wait_for(closing, scaled(20))


async def test_a_failed_fsync_after_the_answer_is_a_session_warning(
    service: SessionService, project: Path
) -> None:
    queue = QueueSubscriber()
    info = await service.create(new(project), queue)
    held = await _held(service, info.session_id)
    held.fail = True
    result = await service.prompt(PromptParams(session_id=info.session_id, text="how are you"))
    assert result.stop_reason == "end_turn"
    held.release.set()
    await until(queue, AgentEnd)
    warning = await until(queue, SessionWarning)
    assert warning[-1].event.message == "write failed: Input/output error"  # type: ignore[union-attr]
    held.fail = False
    again = await service.prompt(PromptParams(session_id=info.session_id, text="hello world"))
    assert again.stop_reason == "end_turn"


class EditorSubscriber(QueueSubscriber):
    """An in-process editor: declares ``fs`` writes (``serves``) and keeps what it is asked
    to write in ``buffers``."""

    def __init__(self, *, serves: bool) -> None:
        super().__init__()
        self.serves = serves
        self.buffers: dict[str, str] = {}

    def serves_files(self, *, write: bool) -> bool:
        return self.serves and not self.closed

    async def file_request(
        self, method: str, params: object, result_type: object, timeout: float
    ) -> object:
        assert method == "fs/writeTextFile"
        self.buffers[params.path] = params.content  # type: ignore[attr-defined]
        return None


async def test_file_tools_go_through_an_editor_only_while_one_that_declared_fs_watches(
    service: SessionService, project: Path
) -> None:
    """A watcher that did not declare ``fs`` leaves the tools on the disk (their file port
    serves nothing); an editor that did gets the write; once it unsubscribes, the disk
    again."""
    plain, editor = EditorSubscriber(serves=False), EditorSubscriber(serves=True)
    info = await service.create(new(project), plain)
    runtime = service._loaded(info.session_id)
    assert runtime is not None
    prompt = PromptParams(session_id=info.session_id, text="hello world")
    await service.prompt(prompt)
    files = runtime.agent.context.files
    assert isinstance(files, ClientFiles)
    assert not files.available()
    assert (project / "hello.py").exists()
    (project / "hello.py").unlink()
    await service.subscribe(SubscribeParams(session_id=info.session_id), editor)
    assert files.available()
    await service.prompt(prompt)
    assert list(editor.buffers) == [str(project / "hello.py")]
    assert not (project / "hello.py").exists()
    assert (await service.unsubscribe(SessionIdParams(session_id=info.session_id), editor)).ok
    assert not files.available()
    await service.prompt(prompt)
    assert (project / "hello.py").exists()
    assert len(editor.buffers) == 1
