"""One session file: create, open (load, repair, migrate), append, branch, fork.

Durability: every entry is one ``write()`` of its encoded line plus LF on a descriptor
opened with ``O_APPEND`` (nothing is buffered in the process); :meth:`SessionFile.sync`
fsyncs, and the agent loop calls it at the end of every turn; :meth:`SessionFile.close`
fsyncs too. A write that fails (a full disk) is cut back to the last complete entry and
raises :class:`~agentd.errors.StoreWriteFailed`; the entry is not added, so what the tree
holds is what the file holds, and appending works again once there is space. The header
is written and fsynced at creation, so a session with no turns can be resumed. Everything
written goes through the redactor first, except the header (ids, a path and a time).

One writer: the daemon opens and creates files with ``lock=True``, holding an exclusive
``flock`` until :meth:`SessionFile.close` (:mod:`agentd.store.lock`).

Branches: on open, the leaf is the last entry in file order. :meth:`SessionFile.branch`
moves the leaf in memory only; the move becomes durable with the next append, whose
``parentId`` is the new leaf (so a branch with nothing appended is lost on restart, by
design: it holds nothing new).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Collection
from pathlib import Path
from types import TracebackType

import msgspec

from agentd.errors import InvalidParams, SessionExists
from agentd.protocol.content import Message, TextContent, ToolResultMessage
from agentd.protocol.events import PlanItem
from agentd.protocol.session_file import (
    SESSION_VERSION,
    CompactionEntry,
    Entry,
    MessageEntry,
    PlanEntry,
    SessionHeader,
    entry_decoder,
)
from agentd.redact import Redactor
from agentd.store import blobs
from agentd.store.lock import open_locked, take_lock
from agentd.store.paths import (
    check_session_id,
    cwd_slug,
    find_session,
    new_entry_id,
    session_file_name,
    session_id_of,
    utc_now,
)
from agentd.store.reader import gc_paused, log_warning, read_session
from agentd.store.refs import LineReader, MessageRef
from agentd.store.tree import LoadWarning, Node, SessionTree, UnknownEntry
from agentd.store.writes import AppendOnly, claim, create_file, same_file, write_failed

INTERRUPTED_TEXT = "interrupted: the tool call did not finish (the daemon stopped)"
"""The text of the error result :meth:`SessionFile.repair_interrupted` gives dangling calls."""

_ENCODER = msgspec.json.Encoder()


class SessionFile(AppendOnly, SessionTree):
    """A session's JSONL file and its entry tree (see :class:`SessionTree` for queries).

    Not thread-safe: one owner appends. ``warnings`` lists what loading found wrong.
    """

    def __init__(
        self,
        path: Path,
        header: SessionHeader,
        nodes: list[Node],
        *,
        secrets: Collection[str] = (),
        warnings: list[LoadWarning] | None = None,
        truncate_to: int | None = None,
        fd: int | None = None,
        locked: bool = False,
    ) -> None:
        resolved = [n if isinstance(n, MessageRef) else blobs.resolved(n, path) for n in nodes]
        super().__init__(resolved, LineReader(path, keep_open=locked))
        self.path = path
        self.header = header
        self.warnings: list[LoadWarning] = [*(warnings or []), *self.tree_warnings]
        self._secrets = frozenset(secrets)
        self._redactor = Redactor(self._secrets)
        self._truncate_to = truncate_to
        self._fd = fd
        self._folder_unsynced = False
        """Created without its folder entry fsynced (see :meth:`create`)."""
        self._size = os.fstat(fd).st_size if fd is not None else 0
        self._unsynced = False
        self._locked = locked

    def redact_json(self, encoded: bytes) -> bytes:
        """Encoded JSON with the secrets this file redacts replaced (for every other surface
        a session's data reaches: live events, ``session/messages``)."""
        return self._redactor.json(encoded)

    def redact_text(self, text: str) -> str:
        """``text`` with the secrets this file redacts replaced (spill files)."""
        return self._redactor.text(text)

    def held_from(self, text: str) -> int:
        """Where a secret may begin that ``text`` does not finish (:meth:`Redactor.held_from`)."""
        return self._redactor.held_from(text)

    def add_secrets(self, secrets: Collection[str]) -> None:
        """Redact these values too from every entry appended from now on."""
        self._secrets = self._secrets | frozenset(secrets)
        self._redactor = Redactor(self._secrets)

    # --- opening --------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        root: Path,
        *,
        cwd: str,
        session_id: str | None = None,
        parent_session: str | None = None,
        parent_entry_id: str | None = None,
        secrets: Collection[str] = (),
        lock: bool = False,
        subagent_of: tuple[str, str] | None = None,
    ) -> SessionFile:
        """Create a new session file under ``root`` and write its header (fsynced); with
        ``lock``, hold its lock (see :mod:`agentd.store.lock`) until :meth:`close`.
        ``subagent_of``: (parent session id, tool call id) of the ``task`` call it serves;
        such a file starts at once and is made durable (file and folder) by its first
        :meth:`sync` instead.

        Without ``session_id``, a random one is made up (64 bits: not looked up in the
        store, whose scan grows with it; about 9 ms per creation at 1,000 per-cwd folders).
        Raises :class:`InvalidParams` for an unsafe ``session_id`` or a relative ``cwd``,
        and :class:`SessionExists` when ``session_id`` is already used under ``root``: also
        when another process created a file for the same id at the same moment (then both
        creators may be refused, but never both succeed).
        """
        chosen = session_id is not None
        if session_id is None:
            session_id = uuid.uuid4().hex[:16]
        check_session_id(session_id)
        folder = root / cwd_slug(cwd)
        # a scan of the store, for a chosen id only: one made up is 64 random bits, which no
        # store holds twice (and O_EXCL still refuses the same file name)
        if chosen and find_session(root, session_id) is not None:
            raise SessionExists(f"session {session_id!r} already exists")
        header = SessionHeader(
            version=SESSION_VERSION,
            id=session_id,
            cwd=cwd,
            created_at=utc_now(),
            parent_session=parent_session,
            parent_entry_id=parent_entry_id,
            parent_session_id=subagent_of[0] if subagent_of else None,
            parent_tool_call_id=subagent_of[1] if subagent_of else None,
        )
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        path = folder / session_file_name(header.created_at, session_id)
        try:
            fd = create_file(path, header, durable=subagent_of is None)
        except FileExistsError:  # another process created this id in the same millisecond
            raise SessionExists(f"session {session_id!r} already exists") from None
        if chosen:
            claim(root, path, fd)
        session = cls(path, header, [], secrets=secrets, fd=fd, locked=lock)
        session._folder_unsynced = session._unsynced = subagent_of is not None
        if lock:
            take_lock(fd, path, session_id)
        return session

    @classmethod
    def open(cls, path: Path, *, secrets: Collection[str] = (), lock: bool = False) -> SessionFile:
        """Load the session at ``path`` (with ``lock``, first take its lock until
        :meth:`close`, see :mod:`agentd.store.lock`): migrate an older format (rewriting the
        file), skip damaged lines (see ``warnings``); a torn last line is truncated away
        before the next append. Raises :class:`SessionLocked` when another process has it
        loaded, :class:`InvalidParams` for a file without a readable header."""
        session_id = session_id_of(path.name) or path.stem
        fd = open_locked(path, session_id) if lock else None
        try:
            with gc_paused():
                loaded = read_session(path, Redactor(secrets))
                if fd is not None:
                    fd = same_file(path, fd, session_id)
                torn = loaded.valid_size < loaded.size
                session = cls(
                    path,
                    loaded.header,
                    loaded.nodes,
                    secrets=secrets,
                    warnings=loaded.warnings,
                    truncate_to=loaded.valid_size if torn else None,
                    fd=fd,
                    locked=lock,
                )
        except BaseException:
            if fd is not None:
                os.close(fd)
            raise
        for warning in session.warnings:
            log_warning("session_load", path=str(path), line=warning.line, problem=warning.message)
        return session

    # --- writing --------------------------------------------------------------------------

    def append(self, entry: Entry) -> Entry:
        """Write ``entry`` as a child of the leaf and make it the leaf; return it as stored.

        The store sets ``parent_id`` and ``timestamp``, and keeps the caller's ``id`` when it
        is set and unused, else assigns a short random one. Secrets are redacted before the
        write; the returned entry is what the file holds.
        """
        entry_id = entry.id if entry.id and entry.id not in self._by_id else None
        stored = msgspec.structs.replace(
            entry,
            id=entry_id or new_entry_id(self._by_id),
            parent_id=self.leaf_id,
            timestamp=utc_now(),
        )
        line = _ENCODER.encode(self._externalized(stored))
        redacted = self._redactor.json(line)
        if redacted is not line:
            stored = self._resolved(entry_decoder().decode(redacted))
        offset = self._write(redacted + b"\n")
        self._insert(stored, (offset, len(redacted)))
        return stored

    def append_message(self, message: Message) -> Entry:
        """Append a ``message`` entry; its id is ``message.id`` when that is free."""
        return self.append(MessageEntry(id=message.id, message=message))

    def append_compaction(
        self, summary: str, first_kept_entry_id: str, tokens_before: int = 0
    ) -> Entry:
        """Append a compaction: :meth:`messages` then starts with ``summary`` as a user
        message, followed by the branch from ``first_kept_entry_id`` on."""
        return self.append(
            CompactionEntry(
                summary=summary,
                first_kept_entry_id=first_kept_entry_id,
                tokens_before=tokens_before,
            )
        )

    def append_plan(self, entries: list[PlanItem]) -> Entry:
        """Append a ``plan`` entry: the agent's whole plan from now on (:meth:`plan`)."""
        return self.append(PlanEntry(entries=entries))

    def repair_interrupted(self) -> list[Entry]:
        """Answer every tool call on the branch that has no result with an error result
        (:data:`INTERRUPTED_TEXT`), so the conversation is valid for every provider.

        Returns the appended entries (none when nothing dangles); syncs when it wrote.
        """
        repaired = [
            self.append_message(
                ToolResultMessage(
                    id=new_entry_id(self._by_id),
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=[TextContent(text=INTERRUPTED_TEXT)],
                    is_error=True,
                    timestamp=time.time(),
                )
            )
            for call in self.dangling_tool_calls()
        ]
        if repaired:
            self.sync()
        return repaired

    def branch(self, entry_id: str | None) -> None:
        """Move the leaf to ``entry_id`` (``None``: before the first entry), so the next
        append starts a new branch there. Raises :class:`InvalidParams` for an unknown id."""
        if entry_id is not None and not self.has_entry(entry_id):
            raise InvalidParams(f"session {self.header.id!r} has no entry {entry_id!r}")
        self.leaf_id = entry_id

    def fork(
        self, root: Path, entry_id: str | None = None, *, session_id: str | None = None
    ) -> SessionFile:
        """A new session under ``root`` holding a copy of the path root → ``entry_id``
        (default: the leaf), with ``parent_session`` set to this session, ``parent_entry_id``
        to that entry (the branch point) and its leaf at ``entry_id``. The copy keeps entry
        ids and is self-contained. Raises like :meth:`create`, and :class:`InvalidParams`
        for an unknown ``entry_id``."""
        from agentd.store.fork import copy_branch

        if entry_id is not None and not self.has_entry(entry_id):
            raise InvalidParams(f"session {self.header.id!r} has no entry {entry_id!r}")
        chain = list(self._branch_nodes(entry_id))
        child = SessionFile.create(
            root,
            cwd=self.header.cwd,
            session_id=session_id,
            parent_session=self.header.id,
            parent_entry_id=entry_id if entry_id is not None else self.leaf_id,
            secrets=self._secrets,
        )
        try:
            copy_branch(chain, self._copied, child._line_of, child._write, child._insert)
            if chain:
                child.sync()
        except BaseException:
            child.close()
            child.path.unlink(missing_ok=True)
            raise
        return child

    def close(self) -> None:
        """Sync and close the file descriptors. Appending (or reading) later reopens the
        file."""
        try:
            if self._fd is not None:
                try:
                    self.sync()
                finally:
                    os.close(self._fd)
                    self._fd = None
        finally:
            if self._reader is not None:
                self._reader.close()

    def __enter__(self) -> SessionFile:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- internals ------------------------------------------------------------------------

    def _externalized(self, entry: Entry) -> Entry:
        """``entry`` as its line holds it: images as references to their files
        (:mod:`agentd.store.blobs`); a failed image write is a :class:`StoreWriteFailed`."""
        try:
            return blobs.externalized(entry, self.path)
        except OSError as exc:
            raise write_failed(blobs.images_dir(self.path), exc) from exc

    def _resolved(self, entry: Entry) -> Entry:
        return blobs.resolved(entry, self.path)

    def _line_of(self, node: Node) -> bytes:
        """The line ``node`` (decoded) is written as in this file."""
        if isinstance(node, UnknownEntry):
            return node.raw
        assert not isinstance(node, MessageRef)
        return self._redactor.json(_ENCODER.encode(self._externalized(node)))
