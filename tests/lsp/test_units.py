"""The pure parts of the LSP front-end: positions and edits in each encoding, and the
batching of progress reports (real event loop, real timers)."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

from agentd.lsp.edits import create_edit, offset_at, position_at, replace_edit, text_edit
from agentd.lsp.progress import ProgressReporter

TEXT = "héllo 𝄞 wörld\nsecond line\n"


def _apply(text: str, edit: dict[str, Any], encoding: str) -> str:
    start = edit["range"]["start"]
    end = edit["range"]["end"]
    first = offset_at(text, start["line"], start["character"], encoding)
    last = offset_at(text, end["line"], end["character"], encoding)
    return text[:first] + edit["newText"] + text[last:]


def test_positions_count_code_units_of_the_encoding() -> None:
    after_clef = TEXT.index("𝄞") + 1
    assert position_at(TEXT, after_clef, "utf-16") == {"line": 0, "character": 8}
    assert position_at(TEXT, after_clef, "utf-8") == {"line": 0, "character": 11}
    assert position_at(TEXT, after_clef, "utf-32") == {"line": 0, "character": 7}
    for encoding in ("utf-16", "utf-8", "utf-32"):
        for offset in range(len(TEXT) + 1):
            where = position_at(TEXT, offset, encoding)
            assert offset_at(TEXT, where["line"], where["character"], encoding) == offset
    assert offset_at(TEXT, 9, 0) == len(TEXT)  # past the end: clamped
    assert offset_at(TEXT, 1, 99) == TEXT.index("second line") + len("second line")


def test_the_smallest_edit_turns_the_old_text_into_the_new() -> None:
    new = TEXT.replace("wörld", "world").replace("second", "2nd")
    for encoding in ("utf-16", "utf-8", "utf-32"):
        edit = text_edit(TEXT, new, encoding)
        assert edit is not None
        assert _apply(TEXT, edit, encoding) == new
        assert edit["newText"] == "orld\n2"  # "ö" … "seco" replaced: "nd" is kept
    assert text_edit(TEXT, TEXT) is None
    assert text_edit("aaa", "aaaa") == {
        "range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 3}},
        "newText": "a",
    }


def test_workspace_edits_are_versioned_or_plain_and_create_files() -> None:
    versioned = replace_edit("file:///a", "x\n", "y\n", version=4, document_changes=True)
    assert versioned is not None
    [change] = versioned["documentChanges"]
    assert change["textDocument"] == {"uri": "file:///a", "version": 4}
    plain = replace_edit("file:///a", "x\n", "y\n", version=4, document_changes=False)
    assert plain == {"changes": {"file:///a": [change["edits"][0]]}}
    assert replace_edit("file:///a", "x", "x", version=1, document_changes=True) is None
    made = create_edit("file:///b", "hi\n")
    create, text = made["documentChanges"]
    assert create == {"kind": "create", "uri": "file:///b", "options": {"ignoreIfExists": True}}
    assert text["edits"][0]["newText"] == "hi\n"
    assert create_edit("file:///c", "")["documentChanges"] == [
        {"kind": "create", "uri": "file:///c", "options": {"ignoreIfExists": True}}
    ]


async def test_reports_are_batched_and_lose_nothing() -> None:
    sent: list[tuple[float, dict[str, Any]]] = []

    def notify(method: str, params: Any) -> None:
        assert method == "$/progress"
        sent.append((time.monotonic(), params["value"]))

    progress = ProgressReporter(notify, "t", interval=0.05)
    progress.begin("agentd", "a prompt")
    pieces = [f"d{i} " for i in range(300)]
    for index, piece in enumerate(pieces):
        progress.text(piece)
        if index == 150:
            progress.line("bash: make test")
        await asyncio.sleep(0.001)
    await progress.end("end_turn")
    progress.text("after the end")  # ignored
    kinds = [value["kind"] for _, value in sent]
    assert kinds[0] == "begin"
    assert kinds[-1] == "end"
    reports = [(at, value) for at, value in sent if value["kind"] == "report"]
    joined = "".join(value["message"] for _, value in reports)
    assert joined == "".join(pieces[:151]) + "\nbash: make test\n" + "".join(pieces[151:])
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(reports)]
    assert all(gap >= 0.045 for gap in gaps), gaps  # timers never fire early
    assert sent[-1][1] == {"kind": "end", "message": "end_turn"}
    assert progress.reports == len(reports)
