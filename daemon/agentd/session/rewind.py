"""``session/rewind``: take a session back to before one of its user prompts, files included.

The target is a user message on the current branch (the ``turns``-th last, or ``entryId``).
The entries after it on the branch are *discarded*: the leaf moves to the target's parent,
and a ``rewind`` entry appended there records what happened (so the move survives a daemon
restart; the discarded turns stay in the file as a branch). The files the discarded runs
changed (their ``file_changes`` entries) are put back as they were before the first of those
changes: rewritten from the kept before-image, or removed when the runs created them.

A file whose current content is not what the runs left (changed outside agentd since) is a
conflict and left alone unless ``force``. An existing file is rewritten in place (it keeps its
inode, mode and owner; a crash in the middle can leave it part-written, and rewinding again
with ``force`` finishes it); a missing one is created by a temp file and a rename.
Restores happen beneath the session's workspace —
the sandbox root, or the working directory of an unsandboxed session — through the same
descriptor-based opens as the file tools (:mod:`agentd.tools.files.safeopen`): a path that
leaves it (through a symlink too) or lands in a control folder is refused, never written.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agentd.errors import InvalidParams
from agentd.protocol.content import TextContent, UserMessage
from agentd.protocol.rewind import (
    ConflictReason,
    RewindConflict,
    SessionRewindParams,
    SessionRewindResult,
)
from agentd.protocol.session_file import Entry, FileChangesEntry, MessageEntry, RewindEntry
from agentd.store.contents import ContentStore, digest_of
from agentd.tools.base import ToolError
from agentd.tools.files.fileio import atomic_write
from agentd.tools.files.protected import check_directory_fd
from agentd.tools.files.safeopen import open_beneath, parent_dir, read_bytes

if TYPE_CHECKING:
    from agentd.session.runtime import SessionRuntime


class Restore(msgspec.Struct, frozen=True):
    """One file to put back: to ``target`` (a digest; None: remove it), from what the runs
    ``left`` there; ``kept`` false (with ``note``) when ``target``'s content was not kept."""

    path: str
    target: str | None
    left: str | None
    kept: bool
    note: str | None = None


class Outcome(msgspec.Struct):
    """The files a rewind restored, removed and left alone."""

    restored: list[str] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)
    conflicts: list[RewindConflict] = msgspec.field(default_factory=list)


async def rewind_session(
    runtime: SessionRuntime, params: SessionRewindParams
) -> SessionRewindResult:
    """Rewind ``runtime``'s session (see the module docstring). SessionBusy while it runs;
    InvalidParams for a target that is not a user prompt on the branch."""
    runtime.run.check_idle("rewind")
    branch = runtime.file.path_to_leaf()
    index = target_index(branch, params.turns, params.entry_id)
    target = branch[index]
    assert isinstance(target, MessageEntry)
    outcome = Outcome()
    with runtime.run.during("rewinding"):
        if params.files:
            plans = plan(branch[index:])
            store, root = runtime.changes.store, _root(runtime)
            outcome = await asyncio.to_thread(
                restore_all, plans, store, root, params.force, dry_run=params.dry_run
            )
        file = runtime.file
        if not params.dry_run:
            _move_leaf(runtime, target.parent_id, outcome)
    return SessionRewindResult(
        leaf_id=target.parent_id if params.dry_run else file.leaf_id,
        prompt=_text(target),
        restored=outcome.restored,
        removed=outcome.removed,
        conflicts=outcome.conflicts,
    )


def _move_leaf(runtime: SessionRuntime, parent_id: str | None, outcome: Outcome) -> None:
    """Branch the session file at ``parent_id`` and record the rewind there."""
    file = runtime.file
    from_leaf = file.leaf_id
    file.branch(parent_id)
    entry = RewindEntry(
        from_leaf_id=from_leaf,
        restored=outcome.restored,
        removed=outcome.removed,
        conflicts=outcome.conflicts,
    )
    file.append(entry)
    file.sync()
    runtime.agent.messages = file.messages()
    runtime.changes.taken_back(outcome.restored + outcome.removed)


def target_index(branch: list[Entry], turns: int | None, entry_id: str | None) -> int:
    """The index on ``branch`` of the user message to go back before: ``entry_id``, or the
    ``turns``-th last user message (default 1). InvalidParams when there is none."""
    prompts = [
        i
        for i, entry in enumerate(branch)
        if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage)
    ]
    if entry_id is not None:
        if turns is not None:
            raise InvalidParams("give either turns or entryId, not both")
        for i in prompts:
            if branch[i].id == entry_id:
                return i
        raise InvalidParams(f"entry {entry_id!r} is not a user prompt on the current branch")
    wanted = 1 if turns is None else turns
    if not prompts:
        raise InvalidParams("the current branch has no user prompt to rewind to")
    if wanted > len(prompts):
        raise InvalidParams(
            f"cannot rewind {wanted} turns: the current branch has {len(prompts)} user prompts"
        )
    return prompts[-wanted]


def plan(discarded: list[Entry]) -> list[Restore]:
    """The files the ``discarded`` entries changed, each to go back to its content before the
    first of those changes (the first record decides whether that content was kept)."""
    first: dict[str, Restore] = {}
    left: dict[str, str | None] = {}
    for entry in discarded:
        if not isinstance(entry, FileChangesEntry):
            continue
        for change in entry.changes:
            if change.path not in first:
                first[change.path] = Restore(
                    change.path, change.before, None, change.kept, change.note
                )
            left[change.path] = change.after
    return [msgspec.structs.replace(r, left=left[path]) for path, r in first.items()]


def restore_all(
    plans: list[Restore], store: ContentStore, root: Path, force: bool, *, dry_run: bool = False
) -> Outcome:
    """Put each file of ``plans`` back beneath ``root`` (see the module docstring);
    ``dry_run``: only say what would be done."""
    outcome = Outcome()
    real_root = Path(os.path.realpath(root))
    for restore in plans:
        try:
            _restore(restore, store, real_root, force, outcome, dry_run)
        except ToolError as exc:
            outcome.conflicts.append(_conflict(restore.path, "refused", str(exc)))
        except OSError as exc:
            message = f"could not be restored: {exc.strerror or exc}"
            outcome.conflicts.append(_conflict(restore.path, "refused", message))
    return outcome


def _restore(
    restore: Restore, store: ContentStore, root: Path, force: bool, out: Outcome, dry_run: bool
) -> None:
    """Restore one file into ``out`` (``dry_run``: only check); raises ToolError or OSError
    when refused or failed."""
    path = Path(restore.path)
    if not restore.kept:
        note = restore.note or "its earlier content was not kept"
        out.conflicts.append(_conflict(restore.path, "not_restorable", note))
        return
    if not path.is_relative_to(root) or path == root:
        raise ToolError(f"{path} is outside the workspace {root}; it is not restored")
    current = _current_digest(path, root)
    if current == restore.target:
        return
    if current != restore.left and not force:
        message = "changed since agentd left it (pass force to restore it anyway)"
        out.conflicts.append(_conflict(restore.path, "changed", message))
        return
    if restore.target is None:
        if not dry_run:
            with parent_dir(path, root) as dir_fd, contextlib.suppress(FileNotFoundError):
                os.unlink(path.name, dir_fd=dir_fd)
        out.removed.append(restore.path)
        return
    content = store.get(restore.target)
    if content is None:
        note = "its kept content is missing or damaged"
        out.conflicts.append(_conflict(restore.path, "not_restorable", note))
        return
    if not dry_run:
        _write_back(path, content, root)
    out.restored.append(restore.path)


def _write_back(path: Path, content: bytes, root: Path) -> None:
    """Put ``content`` in ``path`` beneath ``root``: in place when it is a regular file with
    one name (it keeps its inode, mode and owner, and costs no new file), else by a temp
    file and a rename (a missing file, or one with several names, which the rename parts
    from the others). Control files are refused (checked on the opened descriptor)."""
    try:
        fd = open_beneath(path, root, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        atomic_write(path, content, root)
        return
    with os.fdopen(fd, "wb") as file:
        check_directory_fd(fd, path.name, root, str(path))
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
            os.ftruncate(fd, 0)
            file.write(content)
            return
    atomic_write(path, content, root)


def _root(runtime: SessionRuntime) -> Path:
    """Where the rewind may write: the sandbox workspace, else the session's cwd."""
    workspace = runtime.policy.workspace
    return workspace if workspace is not None else Path(runtime.settings.cwd)


def _conflict(path: str, reason: ConflictReason, message: str) -> RewindConflict:
    return RewindConflict(path=path, reason=reason, message=message)


def _current_digest(path: Path, root: Path) -> str | None:
    """The digest of ``path`` now (opened beneath ``root``); None when it does not exist."""
    try:
        return digest_of(read_bytes(path, root))
    except FileNotFoundError:
        return None


def _text(entry: MessageEntry) -> str:
    message = entry.message
    if not isinstance(message, UserMessage):
        return ""
    return "".join(block.text for block in message.content if isinstance(block, TextContent))
