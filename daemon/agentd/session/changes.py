"""What a session's runs change on disk, kept for ``session/rewind``.

:class:`ChangeRecorder` is the session's :class:`agentd.tools.base.FileChanges`. For each file
a run changes it records a :class:`~agentd.protocol.rewind.FileChange`; the first change of a
file in a run also keeps the content before it (the *before-image*) in the session's
:class:`~agentd.store.contents.ContentStore`, deduplicated by digest. The runtime writes the
pending changes to the session file as one ``file_changes`` entry after each tool call
(:meth:`take_pending`), and at the run's end whatever is still being recorded (waiting for
it), so what a run changed survives a daemon restart. The hashing and the writes of the
before-images run on one recording thread of the daemon, in submission order, after the
tool's call returns: they do not lengthen the call.

Caps: a before-image larger than ``max_file_bytes``, or one that would take the session's
store past ``max_session_bytes``, is not kept: the change is recorded with ``kept`` false
and a note, and a rewind lists that file as not restorable.

bash: :meth:`watching` brings the session's view of its working tree
(:class:`agentd.session.treewatch.Tree`, kept from one command to the next, with inotify
where the kernel offers it) up to date before the command and again after it: what changed
in between is the command's. What changes while no watch is open (the user's editor between
two calls) is taken in by the next one's first refresh and not recorded; while a watch is open
(a background process's, held until it ends), every refresh records. A file the command
created is recorded (a rewind removes it); a file it changed or deleted is restorable only
when this run kept its before-image already (agentd's own write or edit came first),
otherwise it is recorded as not restorable: its content before the command was never read.
The bash tool does not open a watch for a command that only reads
(:func:`agentd.tools.shellparse.readonly.reads_only`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentd.log import get_logger
from agentd.protocol.rewind import FileChange
from agentd.protocol.session_file import FileChangesEntry
from agentd.session import treewatch
from agentd.store.contents import ContentStore, contents_dir, digest_of

if TYPE_CHECKING:
    from agentd.store import SessionFile
    from agentd.tools.files.history import UndoHistory

log = get_logger("agentd.rewind")


class _Worker:
    """The daemon's one recording thread: every session's changes, in submission order. A
    daemon thread (the process never waits for it: every run waits for its own changes at
    its end)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], list[FileChange]], Future[Any]]]
        self._jobs = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, work: Callable[[], list[FileChange]]) -> Future[list[FileChange]]:
        future: Future[list[FileChange]] = Future()
        self._jobs.put((work, future))
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="agentd-changes", daemon=True
                )
                self._thread.start()
        return future

    def _serve(self) -> None:
        while True:
            work, future = self._jobs.get()
            try:
                future.set_result(work())
            except BaseException as exc:
                future.set_exception(exc)


_WORKER = _Worker()


MAX_FILE_BYTES = 8 * 1024 * 1024
"""The largest before-image kept (bytes)."""

MAX_SESSION_BYTES = 256 * 1024 * 1024
"""The most before-image bytes one session keeps."""

UNSEEN = "changed by a bash command; agentd did not have its earlier content"


class ChangeRecorder:
    """Records the file changes of a session's runs (see the module docstring)."""

    def __init__(
        self,
        store: ContentStore,
        root: Path,
        *,
        excluded: tuple[str, ...] = (),
        max_file_bytes: int = MAX_FILE_BYTES,
        max_session_bytes: int = MAX_SESSION_BYTES,
        max_tree_entries: int | None = None,
        undo: Callable[[], UndoHistory] | None = None,
        inotify: bool = True,
    ) -> None:
        self.store = store
        self.root = Path(os.path.realpath(root))
        self.excluded = excluded
        self.max_file_bytes = max_file_bytes
        self.max_session_bytes = max_session_bytes
        self.max_tree_entries = max_tree_entries
        self._run: dict[str, FileChange] = {}
        """This run's latest change of each file (touched on the worker only)."""
        self._futures: list[Future[list[FileChange]]] = []
        self._undo = undo
        self._inotify = inotify
        self._tree: treewatch.Tree | None = None
        self._tree_lock = threading.Lock()
        self._open = 0
        """Watches open now (touched on the event loop only)."""

    @classmethod
    def for_session(
        cls, cwd: Path, session_path: Path, spill_dir: Path, undo: Callable[[], UndoHistory]
    ) -> ChangeRecorder:
        """The recorder of the session in ``session_path``: before-images beside the file,
        the working tree ``cwd`` watched for bash without the session store and the spill
        files in ``spill_dir``; ``undo`` gives undo_edit's history (see :meth:`taken_back`)."""
        excluded = [session_path.parent.parent, spill_dir]
        return cls(
            ContentStore(contents_dir(session_path)),
            cwd,
            excluded=tuple(os.path.realpath(path) for path in excluded),
            undo=undo,
        )

    def taken_back(self, paths: list[str]) -> None:
        """A rewind put ``paths`` back: undo_edit forgets its snapshots of them (they are of
        the discarded turns)."""
        if self._undo is not None:
            history = self._undo()
            for path in paths:
                history.forget(Path(path))

    def new_run(self) -> None:
        """A run begins: the next change of each file is its first in the run."""
        self._submit(self._forget_run)

    def _forget_run(self) -> list[FileChange]:
        self._run.clear()
        return []

    def take_pending(self, *, wait: bool = False) -> list[FileChange]:
        """The changes recorded since the last call, in order (for one ``file_changes``
        entry): those already recorded, or (``wait``) all, blocking until they are."""
        pending: list[FileChange] = []
        while self._futures and (wait or self._futures[0].done()):
            future = self._futures.pop(0)
            try:
                pending += future.result()
            except Exception:
                log.exception("file change not recorded")
        return pending

    async def settled(self) -> None:
        """Until every change submitted so far is recorded (awaited on the event loop, the
        recording thread does the work)."""
        pending = [asyncio.wrap_future(future) for future in self._futures if not future.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    def write_pending(self, file: SessionFile, *, wait: bool = False) -> None:
        """Append the changes recorded since the last call to ``file`` as one
        ``file_changes`` entry (none when there are none); ``wait``: also those still being
        recorded. Raises StoreWriteFailed like any append."""
        changes = self.take_pending(wait=wait)
        if changes:
            file.append(FileChangesEntry(changes=changes))

    async def changed(self, path: Path, before: bytes | None, after: bytes | None) -> None:
        """Record that ``path`` went from ``before`` to ``after`` (None: no file). The hashing
        and the write of a before-image run on the recording worker after the call returns
        (the contents are already in memory). Never raises for I/O."""
        self._submit(lambda: [self.record(str(path), before, after)])

    def _submit(self, work: Callable[[], list[FileChange]]) -> Future[list[FileChange]]:
        """Run ``work`` on the recording worker, after everything submitted before."""
        future = _WORKER.submit(work)
        self._futures.append(future)
        return future

    def record(self, path: str, before: bytes | None, after: bytes | None) -> FileChange:
        """:meth:`changed`, synchronously: the change as recorded (not yet pending)."""
        after_digest = None if after is None else digest_of(after)
        before_digest = None if before is None else digest_of(before)
        if path in self._run or before is None or before_digest is None:
            kept = before_digest is None or self.store.has(before_digest)
            note = None if kept else "its content before this run's earlier change"
            change = _change(path, before_digest, after_digest, kept, _not_kept(note, kept))
        else:
            note = self._keep(before, before_digest)
            change = _change(path, before_digest, after_digest, note is None, note)
        self._run[path] = change
        return change

    def _keep(self, data: bytes, digest: str) -> str | None:
        """Keep ``data`` as a before-image; None when kept, else why not."""
        if len(data) > self.max_file_bytes:
            return f"larger than the {_mib(self.max_file_bytes)} cap for a kept file"
        if not self.store.has(digest) and (self.store.size() + len(data) > self.max_session_bytes):
            return f"the session's {_mib(self.max_session_bytes)} of kept files are used up"
        try:
            self.store.put(data, digest)
        except OSError as exc:
            log.warning("before-image not kept", error=str(exc))
            return f"could not be kept: {exc.strerror or exc}"
        return None

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        """Record the files a command under this block creates, changes or deletes in the
        working tree (see the module docstring); nothing when the tree is too large."""
        others = self._open
        self._open += 1
        try:
            earlier = await asyncio.to_thread(self._refresh)
            if others and earlier is not None and earlier.any:
                self._submit(lambda: self._command_changes(earlier))
            yield
        finally:
            self._open -= 1
            after = await asyncio.to_thread(self._refresh)
            if after is not None and after.any:
                await asyncio.wrap_future(self._submit(lambda: self._command_changes(after)))

    def _refresh(self) -> treewatch.Changes | None:
        """What changed in the tree since its last refresh (on a worker thread)."""
        with self._tree_lock:
            if self._tree is None:
                self._tree = self._new_tree()
        return self._tree.refresh()

    def _new_tree(self) -> treewatch.Tree:
        """The view of the working tree, watched with the daemon's inotify instance when
        there is one (and ``inotify`` was not turned off)."""
        events = None
        if self._inotify:
            from agentd.session import inotify

            events = inotify.shared()
        return treewatch.Tree(self.root, self.excluded, self.max_tree_entries, events)

    def _command_changes(self, changes: treewatch.Changes) -> list[FileChange]:
        """The ``changes`` a command made, recorded."""
        created, changed, deleted = changes
        found = [self._seen(path, exists=True, created=True) for path in created]
        found += [self._seen(path, exists=True, created=False) for path in changed]
        found += [self._seen(path, exists=False, created=False) for path in deleted]
        return [change for change in found if change is not None]

    def _seen(self, path: str, *, exists: bool, created: bool) -> FileChange | None:
        """The change of ``path`` by a command (None: it holds what this run left there)."""
        content = self._content(path) if exists else None
        if exists and content is None:
            note = f"larger than the {_mib(self.max_file_bytes)} cap, or unreadable"
            change = _change(path, None, None, False, note)
            self._run[path] = change
            return change
        after = None if content is None else digest_of(content)
        earlier = self._run.get(path)
        if earlier is not None:
            if earlier.after == after:
                return None  # agentd's own write, seen by a command running beside it
            change = _change(path, earlier.after, after, self._has(earlier.after))
        elif created:
            change = _change(path, None, after)
        else:
            change = _change(path, None, after, False, UNSEEN)
        self._run[path] = change
        return change

    def _has(self, digest: str | None) -> bool:
        return digest is None or self.store.has(digest)

    def _content(self, path: str) -> bytes | None:
        """The content of ``path`` when within the file cap (None: too large, unreadable)."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as file:
                data = file.read(self.max_file_bytes + 1)
        except OSError:
            return None
        return None if len(data) > self.max_file_bytes else data


def _change(
    path: str, before: str | None, after: str | None, kept: bool = True, note: str | None = None
) -> FileChange:
    return FileChange(path=path, before=before, after=after, kept=kept, note=note)


def _not_kept(note: str | None, kept: bool) -> str | None:
    return None if kept else f"not kept: {note}"


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"
