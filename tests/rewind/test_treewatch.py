"""The bash tree watch's view of the tree, kept between refreshes: with inotify and by stats,
each refresh reports exactly what changed since the previous one (in-place edits of the same
size, new and deleted folders, a folder replaced by a file, a lost event queue, a tree that
grows too large and shrinks again)."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentd.session import inotify
from agentd.session.treewatch import RACY_NS, Changes, Tree
from tests.harness import scaled

MODES = ["inotify", "stats"]


def _events(mode: str) -> inotify.Inotify | None:
    if mode == "stats":
        return None
    events = inotify.shared()
    if events is None:
        pytest.skip("inotify is not available here")
    return events


def _age(root: Path) -> None:
    """Date every file and folder under ``root`` well in the past (a workspace's files are
    older than the command that edits them; the edit then moves their mtime)."""
    past = time.time_ns() - 10 * RACY_NS
    for path in [root, *root.rglob("*")]:
        os.utime(path, ns=(past, past), follow_symlinks=False)


@pytest.fixture
def tree_root(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "work"
    for n in range(30):
        folder = root / f"d{n % 3}" / ("deep" if n % 2 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.txt").write_text("content")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref")
    _age(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _rel(root: Path, changes: Changes | None) -> tuple[list[str], list[str], list[str]]:
    assert changes is not None
    cut = len(str(root)) + 1
    created, changed, deleted = changes
    return [p[cut:] for p in created], [p[cut:] for p in changed], [p[cut:] for p in deleted]


@pytest.mark.parametrize("mode", MODES)
def test_a_refresh_reports_only_what_changed_since_the_last(tree_root: Path, mode: str) -> None:
    tree = Tree(tree_root, events=_events(mode))
    assert _rel(tree_root, tree.refresh()) == ([], [], [])
    assert _rel(tree_root, tree.refresh()) == ([], [], [])
    (tree_root / "d0" / "f0.txt").write_text("CONTENT")  # same size, in place
    assert _rel(tree_root, tree.refresh()) == ([], ["d0/f0.txt"], [])
    assert _rel(tree_root, tree.refresh()) == ([], [], [])  # not twice
    (tree_root / ".git" / "index").write_text("x")  # skipped folder
    assert _rel(tree_root, tree.refresh()) == ([], [], [])


@pytest.mark.parametrize("mode", MODES)
def test_new_folders_deletions_and_replacements(tree_root: Path, mode: str) -> None:
    tree = Tree(tree_root, events=_events(mode))
    tree.refresh()
    (tree_root / "new" / "inner").mkdir(parents=True)
    (tree_root / "new" / "a").write_text("a")
    (tree_root / "new" / "inner" / "b").write_text("b")
    (tree_root / "d1" / "f4.txt").unlink()
    shutil.rmtree(tree_root / "d2")
    created, changed, deleted = _rel(tree_root, tree.refresh())
    assert created == ["new/a", "new/inner/b"]
    assert changed == []
    assert "d1/f4.txt" in deleted
    assert {p for p in deleted if p.startswith("d2/")} == {
        f"d2/{'deep/' if n % 2 else ''}f{n}.txt" for n in range(2, 30, 3)
    }
    (tree_root / "new" / "inner" / "c").write_text("c")  # inside a folder found last time
    assert _rel(tree_root, tree.refresh()) == (["new/inner/c"], [], [])
    shutil.rmtree(tree_root / "new")
    (tree_root / "new").write_text("now a file")
    assert _rel(tree_root, tree.refresh()) == (
        ["new"],
        [],
        ["new/a", "new/inner/b", "new/inner/c"],
    )
    (tree_root / "new").unlink()
    (tree_root / "d0" / "deep").rename(tree_root / "moved")
    created, changed, deleted = _rel(tree_root, tree.refresh())
    assert created == sorted(f"moved/f{n}.txt" for n in (3, 9, 15, 21, 27))
    assert changed == []
    assert deleted == sorted(["new", *(f"d0/deep/f{n}.txt" for n in (3, 9, 15, 21, 27))])


@pytest.mark.parametrize("mode", MODES)
def test_a_folder_replaced_by_another_of_the_same_name(tree_root: Path, mode: str) -> None:
    tree = Tree(tree_root, events=_events(mode))
    tree.refresh()
    shutil.rmtree(tree_root / "d1")
    (tree_root / "d1").mkdir()
    (tree_root / "d1" / "f4.txt").write_text("content")  # same name, a new file
    created, changed, deleted = _rel(tree_root, tree.refresh())
    assert created == []
    assert changed == ["d1/f4.txt"]
    assert "d1/f10.txt" in deleted
    assert "d1/f4.txt" not in deleted


def test_a_lost_event_queue_compares_the_whole_tree(tree_root: Path) -> None:
    """More events than the kernel queues (``IN_Q_OVERFLOW``): the next refresh lists the tree
    again and still reports exactly the changes."""
    events = _events("inotify")
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 40_000:
        pytest.skip(f"the kernel queues {limit} events: too many files to overflow it")
    tree = Tree(tree_root, events=events, max_entries=100_000)
    tree.refresh()
    (tree_root / "d0" / "f6.txt").unlink()
    (tree_root / "new").write_text("new")
    first, second = (os.open(tree_root / name, os.O_WRONLY) for name in ("d0/f0.txt", "d2/f2.txt"))
    try:
        for _ in range(limit // 2 + 100):  # alternating writes: events the kernel cannot merge
            os.write(first, b"x")
            os.write(second, b"y")
    finally:
        os.close(first)
        os.close(second)
    assert _rel(tree_root, tree.refresh()) == (["new"], ["d0/f0.txt", "d2/f2.txt"], ["d0/f6.txt"])
    assert tree.rescans == 1
    assert _rel(tree_root, tree.refresh()) == ([], [], [])


@pytest.mark.parametrize("mode", MODES)
def test_a_tree_too_large_is_tried_again_when_its_root_changes(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "big"
    root.mkdir()
    for n in range(12):
        (root / f"f{n}").write_text("x")
    tree = Tree(root, max_entries=10, events=_events(mode))
    assert tree.refresh() is None
    assert tree.refresh() is None
    for n in range(5):
        (root / f"f{n}").unlink()
    assert tree.refresh() == Changes([], [], [])  # watched again, from now
    for n in range(6):
        (root / f"g{n}").write_text("x")
    assert tree.refresh() is None  # grew past the limit again


def test_stats_see_a_folder_changed_right_after_it_was_listed(tree_root: Path) -> None:
    """Without inotify a folder's mtime says whether to list it again; one changed within the
    timestamp tick of its listing is listed again anyway."""
    tree = Tree(tree_root)
    tree.refresh()
    (tree_root / "d0" / "g.txt").write_text("g")
    assert _rel(tree_root, tree.refresh()) == (["d0/g.txt"], [], [])
    (tree_root / "d0" / "h.txt").write_text("h")  # the folder's mtime may not move now
    assert _rel(tree_root, tree.refresh()) == (["d0/h.txt"], [], [])


def test_trees_sharing_the_instance_hear_their_own_events(tree_root: Path) -> None:
    events = _events("inotify")
    outer, inner = Tree(tree_root, events=events), Tree(tree_root / "d0", events=events)
    outer.refresh()
    inner.refresh()
    (tree_root / "d0" / "f0.txt").write_text("CONTENT")
    (tree_root / "d1" / "f4.txt").write_text("CONTENT")
    assert _rel(tree_root, outer.refresh()) == ([], ["d0/f0.txt", "d1/f4.txt"], [])
    assert _rel(tree_root / "d0", inner.refresh()) == ([], ["f0.txt"], [])
    del inner  # its watches end with it; the outer tree still hears the folder
    (tree_root / "d0" / "f6.txt").write_text("CONTENT")
    assert _rel(tree_root, outer.refresh()) == ([], ["d0/f6.txt"], [])


class RefusingInotify(inotify.Inotify):
    """A real instance that refuses watches past ``allowed`` (as the kernel does at
    ``fs.inotify.max_user_watches``)."""

    allowed = 2

    def watch(self, listener: inotify.Listener, path: str) -> bool:
        if self.allowed <= 0:
            return False
        self.allowed -= 1
        return super().watch(listener, path)


def test_a_refused_watch_falls_back_to_stats(tree_root: Path) -> None:
    _events("inotify")
    events, later = RefusingInotify.open(), RefusingInotify.open()
    assert events is not None
    assert later is not None
    try:
        _fall_back(tree_root, events, later)
    finally:
        events.close()
        later.close()


def _fall_back(tree_root: Path, events: RefusingInotify, later: RefusingInotify) -> None:
    tree = Tree(tree_root, events=events)
    assert tree.refresh() == Changes([], [], [])
    assert tree.events is None  # compared by stats from the start
    (tree_root / "d2" / "deep" / "f5.txt").write_text("CONTENT")
    (tree_root / "d2" / "deep" / "g").write_text("g")
    assert _rel(tree_root, tree.refresh()) == (["d2/deep/g"], ["d2/deep/f5.txt"], [])
    later.allowed = 100
    watched = Tree(tree_root, events=later)
    watched.refresh()
    later.allowed = 0
    (tree_root / "d1" / "new").mkdir()  # its watch is refused: from now on by stats
    (tree_root / "d1" / "new" / "n").write_text("n")
    assert _rel(tree_root, watched.refresh()) == (["d1/new/n"], [], [])
    assert watched.events is None
    (tree_root / "d0" / "f0.txt").write_text("CONTENT")
    assert _rel(tree_root, watched.refresh()) == ([], ["d0/f0.txt"], [])


def test_a_folder_moved_onto_a_name_seen_earlier_stays_watched(tree_root: Path) -> None:
    """Events naming the new place come first (it was created and deleted before): the moved
    folder's one watch serves its new path, and later changes in it are still seen."""
    tree = Tree(tree_root, events=_events("inotify"))
    tree.refresh()
    (tree_root / "d1" / "b").mkdir()
    (tree_root / "d1" / "b").rmdir()
    (tree_root / "d0" / "deep").rename(tree_root / "d1" / "b")
    created, _changed, deleted = _rel(tree_root, tree.refresh())
    assert "d1/b/f3.txt" in created
    assert "d0/deep/f3.txt" in deleted
    (tree_root / "d1" / "b" / "f3.txt").write_text("CONTENT")
    assert _rel(tree_root, tree.refresh()) == ([], ["d1/b/f3.txt"], [])


class CollectingInotify(inotify.Inotify):
    """A real instance that drops the last reference to ``doomed`` while it reads events
    (as the garbage collector may run a finalizer at any allocation, the lock held)."""

    doomed: list[Tree] = []

    def _dispatch(self, data: bytes) -> None:
        self.doomed.clear()  # the tree's finalizer releases its listener right here
        super()._dispatch(data)


def test_a_tree_collected_while_its_instance_reads_events_is_released(tree_root: Path) -> None:
    _events("inotify")
    events = CollectingInotify.open()
    assert events is not None
    done = threading.Event()
    try:
        keeper, doomed = Tree(tree_root, events=events), Tree(tree_root / "d1", events=events)
        keeper.refresh()
        doomed.refresh()
        events.doomed = [doomed]
        del doomed
        (tree_root / "d1" / "f1.txt").write_text("CONTENT")
        reader = threading.Thread(target=lambda: (keeper.refresh(), done.set()), daemon=True)
        reader.start()
        assert done.wait(scaled(30)), "the refresh never returned: the release waited on it"
        (tree_root / "d0" / "f0.txt").write_text("CONTENT")
        assert _rel(tree_root, keeper.refresh()) == ([], ["d0/f0.txt"], [])
        assert len(events._listeners) == 1  # the collected tree's listener is gone
    finally:
        if done.is_set():  # else the reader holds the lock for ever
            events.close()
