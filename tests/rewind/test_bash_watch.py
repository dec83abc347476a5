"""The recorder around real bash calls: a read-only command is not watched, a write the rules
cannot see (``bash -c``, a redirection) is recorded, an edit between two calls is not taken
for the next command's, a background watch keeps recording while others open and close, and a
sandboxed command's writes are recorded (with inotify and by stats alike)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.hardening import landlock_abi
from agentd.protocol.rewind import FileChange
from agentd.session.changes import ChangeRecorder
from agentd.store.contents import ContentStore, digest_of
from agentd.tools import build_tools, run_tool
from agentd.tools.base import ToolContext, ToolPorts
from agentd.tools.process import mountns
from agentd.tools.shellparse.readonly import reads_only

MODES = [True, False]  # inotify, stats


class CountedChanges:
    """The session's recorder, counting the watches the tools open (a fake port around the
    real recorder)."""

    def __init__(self, recorder: ChangeRecorder) -> None:
        self.recorder, self.watches = recorder, 0

    async def changed(self, path: Path, before: bytes | None, after: bytes | None) -> None:
        await self.recorder.changed(path, before, after)

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        self.watches += 1
        async with self.recorder.watching():
            yield


@pytest.fixture(params=MODES, ids=["inotify", "stats"])
def recorder(request: pytest.FixtureRequest, tmp_path: Path) -> ChangeRecorder:
    work = tmp_path / "work"
    work.mkdir()
    (work / "kept.txt").write_text("kept")
    past = 1_600_000_000_000_000_000
    os.utime(work / "kept.txt", ns=(past, past))
    return ChangeRecorder(ContentStore(tmp_path / "s.files"), work, inotify=request.param)


def _bash(changes: CountedChanges, command: str, workspace: Path | None = None) -> str:
    root = changes.recorder.root
    ctx = ToolContext(
        cwd=root,
        session_id=f"bw-{os.getpid()}",
        workspace=workspace,
        spill_dir=root.parent / "spill",
        ports=ToolPorts(changes=changes),
    )
    result = asyncio.run(run_tool(build_tools(["bash"])["bash"], {"command": command}, ctx))
    assert isinstance(result.output, str)
    return result.output


def _names(changes: list[FileChange]) -> dict[str, FileChange]:
    return {Path(change.path).name: change for change in changes}


def test_the_parsed_rules_tell_a_read_only_command() -> None:
    for command in ["ls -la", "cat a | grep -n x | head", "git log --oneline -3", "cd d && ls"]:
        assert reads_only(command), command
    for command in [
        "bash -c 'echo x > f'",
        "cat a > b",
        "sort -uo out in",
        "git diff --output=patch",
        "find . -delete",
        "ls $(touch x)",
        "FOO=1 ls",
        "./ls",
        "{ ls; } > out",
        "ls; rm f",
        "echo x | tee f",
    ]:
        assert not reads_only(command), command


def test_a_read_only_command_is_not_watched_a_hidden_write_is(recorder: ChangeRecorder) -> None:
    changes = CountedChanges(recorder)
    assert "kept.txt" in _bash(changes, "ls")
    assert changes.watches == 0
    assert recorder.take_pending(wait=True) == []
    _bash(changes, "bash -c 'echo new > made.txt; echo edit > kept.txt'")
    assert changes.watches == 1
    found = _names(recorder.take_pending(wait=True))
    assert set(found) == {"made.txt", "kept.txt"}
    assert found["made.txt"].before is None
    assert found["made.txt"].after == digest_of(b"new\n")
    assert not found["kept.txt"].kept  # changed by bash: its earlier content was never read
    _bash(changes, "cat made.txt > copy.txt")
    assert set(_names(recorder.take_pending(wait=True))) == {"copy.txt"}


def test_same_size_edits_new_folders_and_deletions(recorder: ChangeRecorder) -> None:
    changes = CountedChanges(recorder)
    _bash(changes, "true")  # the tree is seen once before anything changes
    _bash(changes, "printf KEPT > kept.txt && mkdir -p a/b && echo x > a/b/c")
    found = _names(recorder.take_pending(wait=True))
    assert set(found) == {"kept.txt", "c"}
    assert found["kept.txt"].after == digest_of(b"KEPT")  # same size as before
    _bash(changes, "rm -r a kept.txt")
    found = _names(recorder.take_pending(wait=True))
    assert set(found) == {"kept.txt", "c"}
    assert all(change.after is None for change in found.values())


def test_an_edit_between_two_commands_is_not_the_second_ones(recorder: ChangeRecorder) -> None:
    changes = CountedChanges(recorder)
    _bash(changes, "echo one > one.txt")
    assert set(_names(recorder.take_pending(wait=True))) == {"one.txt"}
    (recorder.root / "users.txt").write_text("the user's own file")
    (recorder.root / "kept.txt").write_text("edited in the user's editor")
    _bash(changes, "echo two > two.txt")
    assert set(_names(recorder.take_pending(wait=True))) == {"two.txt"}


def test_a_watch_held_open_records_what_others_take_in(recorder: ChangeRecorder) -> None:
    """A background process's watch stays open while foreground commands come and go: a file
    it writes before the next command's first refresh is still recorded, once."""
    work = recorder.root

    async def scenario() -> None:
        async with recorder.watching():  # the background process
            (work / "from-background.txt").write_text("bg")
            async with recorder.watching():  # a foreground command
                (work / "from-foreground.txt").write_text("fg")

    asyncio.run(scenario())
    found = recorder.take_pending(wait=True)
    assert sorted(Path(change.path).name for change in found) == [
        "from-background.txt",
        "from-foreground.txt",
    ]


@pytest.mark.skipif(
    not mountns.available() and landlock_abi() == 0, reason="no sandbox (bwrap, Landlock) here"
)
def test_a_sandboxed_command_is_recorded(recorder: ChangeRecorder) -> None:
    changes = CountedChanges(recorder)
    work = recorder.root
    _bash(changes, "true", workspace=work)
    assert recorder.take_pending(wait=True) == []
    out = _bash(changes, "echo s > sandboxed.txt; echo no > /etc/agentd-rw-test", workspace=work)
    assert "/etc/agentd-rw-test" in out  # refused outside the workspace
    assert set(_names(recorder.take_pending(wait=True))) == {"sandboxed.txt"}
    _bash(changes, "echo nothing written >&2", workspace=work)
    assert recorder.take_pending(wait=True) == []
