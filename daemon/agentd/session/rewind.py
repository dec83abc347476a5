"""``session/rewind``: take a session back to before one of its user prompts, files included.

The target is a user message on the current branch (the ``turns``-th last, or ``entryId``).
The entries after it on the branch are *discarded*: the leaf moves to the target's parent,
and a ``rewind`` entry appended there records what happened (so the move survives a daemon
restart; the discarded turns stay in the file as a branch). The files the discarded runs
changed (their ``file_changes`` entries) are put back as they were before the first of those
changes: rewritten from the kept before-image, or removed when the runs created them.

A file whose current content is not what the runs left (changed outside agentd since), or
whose earlier content was not kept, is a conflict: a rewind that meets one moves nothing —
neither the conversation nor any file — unless ``force`` (a dry run of the restore checks
first; ``force`` then restores the changed files too and leaves the unrestorable ones).
Restores happen beneath the session's workspace — the sandbox root, or the working directory
of an unsandboxed session — through descriptors opened beneath it
(:mod:`agentd.session.restore`): a path that leaves it (through a symlink too) or lands in a
control folder is refused, never written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agentd.errors import InvalidParams
from agentd.protocol.content import TextContent, UserMessage
from agentd.protocol.events import SessionRewound
from agentd.protocol.rewind import SessionRewindParams, SessionRewindResult
from agentd.protocol.session_file import FileChangesEntry, MessageEntry, RewindEntry
from agentd.session.restore import Outcome, Restore, restore_all
from agentd.store.refs import MessageRef
from agentd.store.tree import Known

if TYPE_CHECKING:
    from agentd.session.runtime import SessionRuntime


async def rewind_session(
    runtime: SessionRuntime, params: SessionRewindParams
) -> SessionRewindResult:
    """Rewind ``runtime``'s session (see the module docstring). SessionBusy while it runs;
    InvalidParams for a target that is not a user prompt on the branch.

    A check (a dry run of the restore) comes first: when it meets conflicts and ``force`` is
    not given, nothing moves and the result says so (``applied`` false)."""
    runtime.run.check_idle("rewind")
    branch = runtime.file.outline()  # the messages' bodies stay in the file
    index = target_index(branch, params.turns, params.entry_id)
    target = runtime.file.body(branch[index])
    assert isinstance(target, MessageEntry)
    outcome = Outcome()
    with runtime.run.during("rewinding"):
        if params.files:
            plans = plan(branch[index:])
            outcome = await _restore(runtime, plans, params.force, dry_run=True)
            if params.dry_run or (outcome.conflicts and not params.force):
                return _result(target, target.parent_id, outcome, applied=False)
            outcome = await _restore(runtime, plans, params.force, dry_run=False)
        elif params.dry_run:
            return _result(target, target.parent_id, outcome, applied=False)
        await _move_leaf(runtime, target.parent_id, outcome, _text(target))
    return _result(target, runtime.file.leaf_id, outcome, applied=True)


async def _restore(
    runtime: SessionRuntime, plans: list[Restore], force: bool, *, dry_run: bool
) -> Outcome:
    """:func:`restore_all` of ``plans`` beneath the session's workspace, on a thread."""
    store, root = runtime.changes.store, _root(runtime)
    return await asyncio.to_thread(restore_all, plans, store, root, force, dry_run=dry_run)


def _result(
    target: MessageEntry, leaf_id: str | None, outcome: Outcome, *, applied: bool
) -> SessionRewindResult:
    return SessionRewindResult(
        leaf_id=leaf_id,
        entry_id=target.id,
        prompt=_text(target),
        applied=applied,
        restored=outcome.restored,
        removed=outcome.removed,
        conflicts=outcome.conflicts,
    )


async def _move_leaf(
    runtime: SessionRuntime, parent_id: str | None, outcome: Outcome, prompt: str
) -> None:
    """Branch the session file at ``parent_id``, record the rewind there and tell the
    session's subscribers (``session_rewound``)."""
    entry = RewindEntry(
        from_leaf_id=runtime.file.leaf_id,
        restored=outcome.restored,
        removed=outcome.removed,
        conflicts=outcome.conflicts,
    )
    await runtime.rewound(parent_id, entry)
    runtime.changes.taken_back(outcome.restored + outcome.removed)
    runtime.emit(SessionRewound(leaf_id=runtime.file.leaf_id, prompt=prompt))


def target_index(branch: Sequence[Known], turns: int | None, entry_id: str | None) -> int:
    """The index on ``branch`` (an outline: message entries as references) of the user
    message to go back before: ``entry_id``, or the ``turns``-th last user message (default
    1). InvalidParams when there is none."""
    prompts = [i for i, entry in enumerate(branch) if _is_prompt(entry)]
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


def _is_prompt(entry: Known) -> bool:
    if isinstance(entry, MessageRef):
        return entry.role == "user"
    return isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage)


def plan(discarded: Sequence[Known]) -> list[Restore]:
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


def _root(runtime: SessionRuntime) -> Path:
    """Where the rewind may write: the sandbox workspace, else the session's cwd."""
    workspace = runtime.policy.workspace
    return workspace if workspace is not None else Path(runtime.settings.cwd)


def _text(entry: MessageEntry) -> str:
    """What the user typed: the custom command (``/review a.py``), else the prompt's text."""
    message = entry.message
    if not isinstance(message, UserMessage):
        return ""
    if message.command:
        return message.command
    return "".join(block.text for block in message.content if isinstance(block, TextContent))
