"""The on-disk types: wire shape of header and entries, the known tags, the schema."""

from __future__ import annotations

import subprocess
import sys

import msgspec

from agentd.protocol.session_file import (
    ENTRY_TYPES,
    SESSION_VERSION,
    CompactionEntry,
    Entry,
    LabelEntry,
    SessionHeader,
    SessionSummary,
)


def test_entry_types_lists_every_tag_of_the_union() -> None:
    """The set used to tell unknown entries apart matches the union exactly."""
    tags = {cls.__struct_config__.tag for cls in Entry.__args__}  # type: ignore[attr-defined]
    assert tags == ENTRY_TYPES


def test_header_and_entries_are_camel_case_with_ids_always_present() -> None:
    """Entries always carry id, parentId (null for a root) and timestamp, first."""
    header = SessionHeader(version=SESSION_VERSION, id="s", cwd="/", created_at="t")
    assert msgspec.json.encode(header) == (
        b'{"type":"session","version":%d,"id":"s","cwd":"/","createdAt":"t"}' % SESSION_VERSION
    )
    entry = CompactionEntry(id="c", summary="s", first_kept_entry_id="k", tokens_before=3)
    assert msgspec.json.encode(entry) == (
        b'{"type":"compaction","id":"c","parentId":null,"timestamp":"",'
        b'"summary":"s","firstKeptEntryId":"k","tokensBefore":3}'
    )
    assert msgspec.json.encode(LabelEntry(target_id="x")).endswith(b'"label":null}')


def test_schema_can_be_generated_from_header_and_entry() -> None:
    """The schema generator's inputs produce JSON Schema components for every entry."""
    (_header, entry), components = msgspec.json.schema_components([SessionHeader, Entry])
    assert len(entry["anyOf"]) == len(ENTRY_TYPES)
    assert {"SessionHeader", "MessageEntry", "CompactionEntry"} <= set(components)


def test_summary_omits_absent_fields() -> None:
    """A listed session without title or parent leaves them out of the wire form."""
    summary = SessionSummary(
        session_id="s", cwd="/", created_at="a", updated_at="b", entry_count=0, path="/p"
    )
    assert msgspec.json.decode(msgspec.json.encode(summary)) == {
        "sessionId": "s",
        "cwd": "/",
        "createdAt": "a",
        "updatedAt": "b",
        "entryCount": 0,
        "path": "/p",
    }


def test_the_store_imports_no_network_or_event_loop_modules() -> None:
    """agentd.store is plain synchronous file code: httpx and asyncio stay unloaded."""
    probe = "import sys, agentd.store; print(sorted({'httpx', 'asyncio'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
