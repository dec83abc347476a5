"""Upgrades of older session files, one small function per version step.

Each migration takes the header and the entries of a file as plain JSON values (dicts) of
version *n* and returns them in version *n + 1*; :data:`MIGRATIONS` maps *n* to it.
Opening an older file migrates it once and rewrites it atomically (a temporary file renamed
over the original), so the appending code only ever sees the current version.

Version 0 (the first format) had no ``version`` field, no entry ids and no parent links: the
file was a linear list. Its header carried ``timestamp`` instead of ``createdAt``,
``model_change`` entries named the model ``modelId``, and user and tool-result messages could
hold their content as a plain string.

Version 1 kept a tool result's ``details`` as a free-form object; version 2 types them
(:mod:`agentd.protocol.tool_details`), told apart by ``type``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from agentd.protocol.session_file import SESSION_VERSION
from agentd.protocol.tool_details import ToolDetails
from agentd.store.paths import new_entry_id

JsonObject = dict[str, Any]
Migration = Callable[[JsonObject, list[JsonObject]], tuple[JsonObject, list[JsonObject]]]


def migrate_v0_to_v1(
    header: JsonObject, entries: list[JsonObject]
) -> tuple[JsonObject, list[JsonObject]]:
    """Version 0 → 1: give every entry an id and link it to the previous one (the linear
    list becomes a single branch), rename ``timestamp``/``modelId``, and turn string content
    into a text block."""
    created = header.get("timestamp") or header.get("createdAt") or ""
    new_header = {key: value for key, value in header.items() if key != "timestamp"}
    new_header.update(type="session", version=1, createdAt=created)
    taken: set[str] = set()
    parent: str | None = None
    upgraded: list[JsonObject] = []
    for entry in entries:
        entry_id = _v0_entry_id(entry, taken)
        taken.add(entry_id)
        body = {key: value for key, value in entry.items() if key not in {"id", "parentId"}}
        new_entry = {"type": entry.get("type"), "id": entry_id, "parentId": parent, **body}
        new_entry.setdefault("timestamp", created)
        if new_entry["type"] == "model_change" and "modelId" in new_entry:
            new_entry["model"] = new_entry.pop("modelId")
        if new_entry["type"] == "message" and isinstance(new_entry.get("message"), dict):
            new_entry["message"] = _v0_message(new_entry["message"])
        upgraded.append(new_entry)
        parent = entry_id
    return new_header, upgraded


def _v0_entry_id(entry: JsonObject, taken: set[str]) -> str:
    message = entry.get("message")
    message_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(message_id, str) and message_id and message_id not in taken:
        return message_id
    return new_entry_id(taken)


def _v0_message(message: JsonObject) -> JsonObject:
    content = message.get("content")
    if isinstance(content, str) and message.get("role") in {"user", "tool_result"}:
        return {**message, "content": [{"type": "text", "text": content}]}
    return message


def migrate_v1_to_v2(
    header: JsonObject, entries: list[JsonObject]
) -> tuple[JsonObject, list[JsonObject]]:
    """Version 1 → 2: give each tool result's ``details`` its ``type`` (``error`` for a failed
    call, ``read_image`` for an image read, else the tool's name). Details that still do not
    fit their type (a tool that no longer exists, keys from an older release) are dropped:
    they only ever fed UIs, and the result the model saw is kept whole."""
    upgraded = []
    for entry in entries:
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict):
            details = message.get("details")
            if message.get("role") == "tool_result" and isinstance(details, dict):
                typed = _typed_details(str(message.get("toolName")), details)
                entry = {**entry, "message": {**message, "details": typed}}
        upgraded.append(entry)
    return {**header, "version": 2}, upgraded


def _typed_details(tool_name: str, details: JsonObject) -> JsonObject | None:
    if "type" in details:
        kind = details["type"]
    elif "error" in details:
        kind = "error"
    elif tool_name == "read" and "mimeType" in details:
        kind = "read_image"
    else:
        kind = tool_name
    typed = {"type": kind, **details}
    try:
        msgspec.convert(typed, ToolDetails)
    except msgspec.ValidationError:
        return None
    return typed


MIGRATIONS: dict[int, Migration] = {0: migrate_v0_to_v1, 1: migrate_v1_to_v2}
"""Version *n* → the function upgrading a file from *n* to *n + 1*."""


def migrate(header: JsonObject, entries: list[JsonObject]) -> tuple[JsonObject, list[JsonObject]]:
    """Apply every migration from the header's version up to :data:`SESSION_VERSION`.

    A header without ``version`` is version 0. Raises ``ValueError`` for an unknown or a
    newer version.
    """
    version = header.get("version", 0)
    if not isinstance(version, int) or version < 0:
        raise ValueError(f"unreadable format version {version!r}")
    if version > SESSION_VERSION:
        raise ValueError(
            f"format version {version} is newer than this agentd supports ({SESSION_VERSION})"
        )
    while version < SESSION_VERSION:
        header, entries = MIGRATIONS[version](header, entries)
        version += 1
    return header, entries
