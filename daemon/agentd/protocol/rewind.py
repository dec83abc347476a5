"""``session/rewind``: its params and result, and the session-file records it reads.

A run records every file it changes (:class:`FileChange`, in ``file_changes`` entries of the
session file: :class:`agentd.protocol.session_file.FileChangesEntry`); ``session/rewind``
takes the session back to before a user prompt and puts those files back as they were.
Digests are SHA-256 hex strings of a file's whole content; ``None`` means "no file".
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from agentd.protocol.base import Params, Result, Wire

ConflictReason = Literal["changed", "not_restorable", "refused"]
"""Why a file was not restored: ``changed`` (changed outside agentd since the run left it;
``force`` restores it anyway), ``not_restorable`` (its earlier content was not kept: over the
size caps, or changed by a bash command agentd could not see before), ``refused`` (the path
leaves the workspace, is a control file, or the restore failed)."""


class FileChange(Wire, omit_defaults=False):
    """One file a tool call changed.

    ``before``: digest of the content before this call changed it (None: the file did not
    exist); ``after``: digest of what the call left (None: it removed the file). ``kept``:
    the content ``before`` names is stored under the session's data dir (always true when
    ``before`` is None); false with ``note`` saying why (over a cap, unseen by agentd)."""

    path: str
    before: str | None
    after: str | None
    kept: bool = True
    note: str | None = None


class SessionRewindParams(Params):
    """``session/rewind``: go back to before the ``turns``-th last user prompt on the current
    branch (default 1), or to before the user message ``entryId``. ``files``: also restore
    the files the discarded runs changed; ``force``: restore files changed outside agentd
    since (otherwise left alone and listed as conflicts); ``dryRun``: change nothing, answer
    what the rewind would do (for a confirmation).

    A rewind that meets a conflict (a file it would leave alone) moves nothing, neither the
    conversation nor any file, unless ``force``: the result lists the conflicts with
    ``applied`` false, and the same call with ``force`` (or ``entryId`` the result's
    ``entryId``) applies it to the same prompt."""

    session_id: str
    turns: Annotated[int, msgspec.Meta(ge=1)] | None = None
    entry_id: str | None = None
    files: bool = True
    force: bool = False
    dry_run: bool = False


class RewindConflict(Result):
    """A file the rewind left alone: ``reason`` (see :data:`ConflictReason`) and ``message``
    for people."""

    path: str
    reason: ConflictReason
    message: str


class SessionRewindResult(Result):
    """What ``session/rewind`` did: the new leaf (``leafId``, None: before the first entry),
    the user message it went back before (``entryId``) and its text (``prompt``: a client
    may offer it for editing), and the files ``restored`` (rewritten), ``removed`` (created
    by the discarded runs) and left alone (``conflicts``). Paths are absolute.

    ``applied``: the session and the files moved. False for a dry run, and when the rewind
    met conflicts without ``force``: then nothing moved, ``leafId``, ``restored`` and
    ``removed`` say what the rewind would do, and ``conflicts`` what stopped it."""

    leaf_id: str | None
    entry_id: str
    prompt: str
    applied: bool
    restored: list[str]
    removed: list[str]
    conflicts: list[RewindConflict]


__all__ = [
    "ConflictReason",
    "FileChange",
    "RewindConflict",
    "SessionRewindParams",
    "SessionRewindResult",
]
