"""The session file format: one JSON header line, then one :data:`Entry` per line (JSONL).

::

    {"type":"session","version":2,"id":"…","cwd":"/home/me/proj","createdAt":"…Z"}
    {"type":"message","id":"a1","parentId":null,"timestamp":"…Z","message":{"role":"user",…}}
    {"type":"message","id":"b2","parentId":"a1","timestamp":"…Z","message":{…}}

Every entry names its parent, so a file holds a tree: branching and forking never copy
entries. Timestamps are ISO 8601 UTC strings (``2026-01-02T03:04:05.678Z``). Lines are
separated by LF only; the file is append-only except for a migration, which rewrites it
atomically. Entry types this version does not know are kept and written back untouched.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec

from agentd.protocol.base import Wire
from agentd.protocol.content import Message
from agentd.protocol.events import HookResult, PlanItem
from agentd.protocol.rewind import FileChange, RewindConflict

SESSION_VERSION = 2
"""The format version written in new headers (see ``agentd.store.migrations``)."""


class SessionHeader(Wire, tag="session", tag_field="type"):
    """The first line of a session file (not an entry of the tree).

    ``parent_session`` is the id of the session this one was forked from, and
    ``parent_entry_id`` the entry of it the fork branched at (its branch point; None: the
    fork copied nothing, or was made before the field existed).
    ``parent_session_id`` and ``parent_tool_call_id`` are set on a subagent's session: the
    session whose ``task`` call (that tool call's id) started it.
    """

    version: int
    id: str
    cwd: str
    created_at: str
    parent_session: str | None = None
    parent_entry_id: str | None = None
    parent_session_id: str | None = None
    parent_tool_call_id: str | None = None


class EntryBase(Wire, tag_field="type", omit_defaults=False, kw_only=False):
    """Fields shared by every entry: its id, its parent's id (``None`` for a root) and the
    time it was written. The store assigns all three on append, so callers build entries
    without them; in a file they are always present."""

    id: str = ""
    parent_id: str | None = None
    timestamp: str = ""


class MessageEntry(EntryBase, tag="message", kw_only=True):
    """A user, assistant or tool-result message: exactly what the model saw."""

    message: Message


class ModelChangeEntry(EntryBase, tag="model_change", kw_only=True):
    """The session switched to ``provider``/``model`` for later LLM calls."""

    provider: str
    model: str


class CompactionEntry(EntryBase, tag="compaction", kw_only=True):
    """Messages before ``first_kept_entry_id`` (on this branch) are replaced by ``summary``."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int = 0


class LabelEntry(EntryBase, tag="label", kw_only=True):
    """A user bookmark on entry ``target_id``; ``label`` ``None`` clears it."""

    target_id: str
    label: str | None = None


class SessionInfoEntry(EntryBase, tag="session_info", kw_only=True):
    """Session metadata; the latest one in the file wins."""

    title: str | None = None


class CustomEntry(EntryBase, tag="custom", kw_only=True):
    """Client-owned state (``custom_type`` names the owner); never sent to the model."""

    custom_type: str
    data: Any = None


class SettingsEntry(EntryBase, tag="settings", kw_only=True):
    """The session's own settings, so a reloaded session behaves as it was created: its
    permission mode and sandbox, tool set, turn limit, system prompt override and endpoint.
    The latest one in the file wins; absent fields fall back to the configuration."""

    permission_mode: str | None = None
    sandbox: str | None = None
    tools: list[str] | None = None
    max_turns: int | None = None
    system_prompt: str | None = None
    base_url: str | None = None


class PlanEntry(EntryBase, tag="plan", kw_only=True):
    """The agent's plan as its latest ``todo`` call wrote it; the latest one on the branch
    is the session's current plan (``plan_update`` events, ``session/state``, exports)."""

    entries: list[PlanItem]


class HookEntry(EntryBase, tag="hook_result", kw_only=True):
    """A configured hook ran (its ``hook_result`` event): what policy did, for the record;
    never sent to the model."""

    hook: HookResult


class FileChangesEntry(EntryBase, tag="file_changes", kw_only=True):
    """The files one tool call of a run changed (write, edit, undo_edit, bash), in order;
    ``session/rewind`` restores them from the contents kept in the session's data dir."""

    changes: list[FileChange]


class RewindEntry(EntryBase, tag="rewind", kw_only=True):
    """A ``session/rewind``: the session went back to its parent entry from ``from_leaf_id``
    (the discarded turns stay in the file as a branch); the files it restored, removed and
    left alone."""

    from_leaf_id: str | None
    restored: list[str] = []
    removed: list[str] = []
    conflicts: list[RewindConflict] = []


Entry = (
    MessageEntry
    | ModelChangeEntry
    | CompactionEntry
    | LabelEntry
    | SessionInfoEntry
    | CustomEntry
    | SettingsEntry
    | PlanEntry
    | HookEntry
    | FileChangesEntry
    | RewindEntry
)
"""Every entry type of this format version, tagged by ``type``."""


@functools.cache
def entry_decoder() -> msgspec.json.Decoder[Entry]:
    """The decoder of a session file's entry lines, built on first use: building it (the
    entry union) takes as long as importing the store, which a new session that only
    appends never needs."""
    return msgspec.json.Decoder(Entry)


ENTRY_TYPES: frozenset[str] = frozenset(
    {
        "message",
        "model_change",
        "compaction",
        "label",
        "session_info",
        "custom",
        "settings",
        "plan",
        "hook_result",
        "file_changes",
        "rewind",
    }
)
"""The ``type`` tags of :data:`Entry`; any other tag is an entry from a newer version."""


class SessionSummary(Wire):
    """One session as listed (``list_sessions``): computed from the file without parsing it.

    ``updated_at`` is the file's modification time; ``entry_count`` counts entry lines.
    ``loaded`` and ``running`` describe the listing daemon: the session is loaded in it, and
    a run is in progress (both omitted when false). ``parent_session`` and
    ``parent_entry_id``: a fork, of that session at that entry. ``parent_session_id`` and
    ``parent_tool_call_id``: a subagent's session, started by that ``task`` call of that
    session (see :class:`SessionHeader`).
    """

    session_id: str
    cwd: str
    created_at: str
    updated_at: str
    entry_count: int
    path: str
    title: str | None = None
    parent_session: str | None = None
    parent_entry_id: str | None = None
    parent_session_id: str | None = None
    parent_tool_call_id: str | None = None
    loaded: bool = False
    running: bool = False


__all__ = [
    "ENTRY_TYPES",
    "SESSION_VERSION",
    "CompactionEntry",
    "CustomEntry",
    "Entry",
    "EntryBase",
    "FileChangesEntry",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "PlanEntry",
    "RewindEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "SessionSummary",
    "SettingsEntry",
]
