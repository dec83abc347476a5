"""The change recorder on real files: before-images kept once per content and per run, the
caps, and the bash tree watch (created, changed, deleted; skipped folders; a tree too large)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentd.session.changes import ChangeRecorder
from agentd.session.treewatch import snapshot
from agentd.store.contents import ContentStore, digest_of


def _recorder(tmp_path: Path, **caps: int) -> ChangeRecorder:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return ChangeRecorder(ContentStore(tmp_path / "s.files"), work, **caps)


def test_first_change_of_a_run_keeps_the_before_image_once(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    path = str(tmp_path / "work" / "f")
    first = recorder.record(path, b"v0", b"v1")
    second = recorder.record(path, b"v1", b"v2")
    assert (first.before, first.after, first.kept) == (digest_of(b"v0"), digest_of(b"v1"), True)
    assert second.before == digest_of(b"v1")
    assert not second.kept
    other = recorder.record(str(tmp_path / "work" / "g"), b"v0", None)  # same content
    assert other.kept
    assert other.after is None
    kept = sorted(p.name for p in (tmp_path / "s.files").iterdir())
    assert kept == [digest_of(b"v0")]
    assert recorder.store.get(digest_of(b"v0")) == b"v0"
    recorder.new_run()  # done on the recording thread: wait for it before recording directly
    recorder.take_pending(wait=True)
    assert recorder.record(path, b"v2", b"v3").kept  # a new run keeps its own first


def test_caps_per_file_and_per_session(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, max_file_bytes=10, max_session_bytes=15)
    big = recorder.record(str(tmp_path / "work" / "big"), b"x" * 11, b"")
    assert not big.kept
    assert "cap" in (big.note or "")
    assert recorder.record(str(tmp_path / "work" / "a"), b"a" * 10, b"").kept
    full = recorder.record(str(tmp_path / "work" / "b"), b"b" * 10, b"")
    assert not full.kept
    assert "used up" in (full.note or "")
    assert recorder.record(str(tmp_path / "work" / "c"), None, b"new").kept  # nothing to keep


def test_a_damaged_kept_content_is_not_returned(tmp_path: Path) -> None:
    store = ContentStore(tmp_path / "s.files")
    store.put(b"hello", digest_of(b"hello"))
    (tmp_path / "s.files" / digest_of(b"hello")).write_bytes(b"HELLO")
    assert store.get(digest_of(b"hello")) is None
    assert store.get("0" * 64) is None


def test_watching_sees_what_a_command_does(tmp_path: Path) -> None:
    """Created files are restorable (removal), a file changed after agentd's own write in
    the run is restorable, one agentd never held is not; skipped folders are not seen."""
    recorder = _recorder(tmp_path)
    work = recorder.root
    (work / "old.txt").write_text("old")
    (work / "mine.txt").write_text("v1")
    recorder.record(str(work / "mine.txt"), b"v0", b"v1")
    recorder.take_pending()

    async def command() -> None:
        async with recorder.watching():
            (work / "new.txt").write_text("new")
            (work / "old.txt").write_text("older")
            (work / "mine.txt").write_text("v2!")
            (work / ".git").mkdir()
            (work / ".git" / "HEAD").write_text("x")

    asyncio.run(command())
    found = {Path(c.path).name: c for c in recorder.take_pending()}
    assert set(found) == {"new.txt", "old.txt", "mine.txt"}
    assert found["new.txt"].before is None
    assert found["new.txt"].kept
    assert found["new.txt"].after == digest_of(b"new")
    assert not found["old.txt"].kept
    assert "bash" in (found["old.txt"].note or "")
    assert found["mine.txt"].before == digest_of(b"v1")
    assert found["mine.txt"].after == digest_of(b"v2!")


def test_a_tree_too_large_is_not_watched(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, max_tree_entries=20)
    for i in range(30):
        (recorder.root / f"f{i}").write_text("x")
    assert snapshot(recorder.root, max_entries=20) is None

    async def command() -> None:
        async with recorder.watching():
            (recorder.root / "new").write_text("n")

    asyncio.run(command())
    assert recorder.take_pending() == []
