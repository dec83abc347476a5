""" "Rewind to here" in the VS Code chat webview (the built bundle in headless Chromium, fed a
run recorded from the real daemon): the dry run, the confirmation the extension shows as a
modal (a ``confirm`` message naming the files and the conflict, OK forcing the rewind), then
the forced rewind, and the prompt offered again. The extension side lets the view call
``session/rewind`` (``WEBVIEW_METHODS``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.vscode.codeserver import EXTENSION
from tests.vscode.test_webview import ARTIFACTS, harness_url, page, posted  # noqa: F401
from tests.vscode.webview_harness import as_session, record

PREVIEW = {
    "leafId": None,
    "entryId": "m1",
    "prompt": "hello world",
    "applied": False,
    "restored": [],
    "removed": ["/project/hello.py"],
    "conflicts": [{"path": "/project/notes.md", "reason": "changed", "message": "changed since"}],
}


def test_rewind_to_here_confirms_then_rewinds(page: Any, tmp_path: Path) -> None:  # noqa: F811
    events = as_session(record("hello world", tmp_path / "run.jsonl"))
    page.evaluate("(events) => feed(events)", events)
    page.get_by_text("Done! hello.py prints").wait_for()
    page.evaluate("(preview) => { RESULTS['session/rewind'] = preview; }", PREVIEW)
    prompt = page.locator(".item--user").first
    prompt.hover()
    prompt.get_by_role("button", name="Rewind to here").click()
    page.wait_for_function("window.posted.some((m) => m.type === 'confirm')")
    page.screenshot(path=str(ARTIFACTS / "webview-rewind.png"))
    (question,) = posted(page, "confirm")
    assert "Remove: hello.py" in question["question"]
    assert "Conflicts: notes.md (changed since)" in question["question"]
    assert "OK rewinds anyway" in question["question"]
    calls = [m for m in posted(page, "request") if m["method"] == "session/rewind"]
    assert [c["params"] for c in calls] == [
        {"sessionId": "S", "entryId": _user_id(events), "dryRun": True}
    ]

    rewound = {**PREVIEW, "applied": True, "conflicts": [], "restored": ["/project/notes.md"]}
    page.evaluate("(result) => { RESULTS['session/rewind'] = result; }", rewound)
    page.evaluate(
        "(id) => window.postMessage({type: 'confirmed', id, ok: true}, '*')", question["id"]
    )
    page.wait_for_function(
        "window.posted.filter((m) => m.method === 'session/rewind').length === 2"
    )
    calls = [m for m in posted(page, "request") if m["method"] == "session/rewind"]
    assert calls[1]["params"] == {"sessionId": "S", "entryId": _user_id(events), "force": True}
    box = page.get_by_role("textbox", name="Message")
    page.wait_for_function("document.querySelector('textarea.input').value === 'hello world'")
    assert box.input_value() == "hello world"


def test_the_extension_lets_the_view_rewind() -> None:
    source = (EXTENSION / "src" / "controller.ts").read_text()
    allowed = source.split("WEBVIEW_METHODS", 1)[1].split("]);", 1)[0]
    assert "'session/rewind'" in allowed


def _user_id(events: list[dict[str, Any]]) -> str:
    return next(
        e["event"]["messageId"]
        for e in events
        if e["event"]["type"] == "message_start" and e["event"].get("role") == "user"
    )
