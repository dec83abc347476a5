"""Names for the entry bodies callers pass to :meth:`SessionFile.append`.

An entry body is an entry Struct built without ``id``, ``parent_id`` and ``timestamp``
(the store fills them in), so each ``…Body`` here is the entry type itself under the name
that reads best at a call site: ``file.append(ModelChangeBody(provider=p, model=m))``.
"""

from __future__ import annotations

from agentd.protocol.session_file import (
    CompactionEntry,
    CustomEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
)

EntryBody = Entry
MessageBody = MessageEntry
ModelChangeBody = ModelChangeEntry
CompactionBody = CompactionEntry
LabelBody = LabelEntry
SessionInfoBody = SessionInfoEntry
CustomBody = CustomEntry

__all__ = [
    "CompactionBody",
    "CustomBody",
    "EntryBody",
    "LabelBody",
    "MessageBody",
    "ModelChangeBody",
    "SessionInfoBody",
]
