"""The transcript renderer fed with events directly (no daemon): parallel tools, long
output, approvals updated in place, replayed history."""

from __future__ import annotations

from typing import Any

from tests.nvim.harness import Editor

FEED = """
local t = require('agentd.transcript')
t.reset({sessionId = 's1', provider = 'p', model = 'm'})
for _, item in ipairs(...) do t.push(item[1], item[2]) end
t.flush()
return vim.api.nvim_buf_get_lines(t.buffer(), 0, -1, false)
"""


def feed(editor: Editor, *events: dict[str, Any], seq: int = 1) -> list[str]:
    return list(editor.lua(FEED, [[e, seq] for e in events]))


def start(call: str, name: str, **args: str) -> dict[str, Any]:
    return {"type": "tool_execution_start", "toolCallId": call, "name": name, "args": args}


def update(call: str, output: str) -> dict[str, Any]:
    return {"type": "tool_execution_update", "toolCallId": call, "output": output}


def end(call: str, name: str, text: str, **extra: Any) -> dict[str, Any]:
    result = [{"type": "text", "text": text}]
    return {
        "type": "tool_execution_end",
        "toolCallId": call,
        "name": name,
        "result": result,
        **extra,
    }


def test_parallel_tools_keep_their_own_output(editor: Editor) -> None:
    lines = feed(
        editor,
        start("a", "bash", command="make a"),
        start("b", "grep", pattern="TODO"),
        update("a", "a1\n"),
        update("b", "b1\n"),
        update("a", "a2\n"),
        end("b", "grep", "b1\n"),
        end("a", "bash", "a1\na2\n", isError=True),
    )
    assert lines[1].startswith("▸ ✗ bash  make a  ")
    assert lines[2:4] == ["│ a1", "│ a2"]
    assert lines[4].startswith("▸ ✓ grep  TODO  ")
    assert lines[5:] == ["│ b1"]


def test_long_output_keeps_the_last_lines(editor: Editor) -> None:
    editor.lua("require('agentd.config').options.chat.tool_output_lines = 3")
    output = "".join(f"line {i}\n" for i in range(10))
    lines = feed(editor, start("a", "bash", command="seq"), end("a", "bash", output))
    assert lines[2:] == ["│ … 7 earlier lines", "│ line 7", "│ line 8", "│ line 9"]


def test_approval_line_is_updated_in_place(editor: Editor) -> None:
    request = {"type": "permission_request", "toolCallId": "a", "tool": "bash"}
    request["args"] = {"command": "rm -rf build"}
    resolved = {"type": "permission_resolved", "toolCallId": "a", "outcome": "reject_once"}
    resolved["reason"] = "answered by agentctl"
    lines = feed(editor, request, {"type": "error", "message": "later"}, resolved)
    assert lines[1:] == ["⚑ rejected (answered by agentctl)", "✗ later"]


def test_replayed_history_shows_messages_and_tool_calls(editor: Editor) -> None:
    user = {"role": "user", "id": "u", "content": [{"type": "text", "text": "run it"}]}
    call = {"type": "tool_call", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    assistant = {"role": "assistant", "id": "m", "content": [{"type": "text", "text": "ok"}, call]}
    result = {"role": "tool_result", "id": "r", "toolCallId": "c1", "toolName": "bash"}
    result["content"] = [{"type": "text", "text": "a.txt"}]
    events = [{"type": "message_end", "message": m} for m in (user, assistant, result)]
    lines = feed(editor, *events, seq=0)
    assert lines[1:] == ["", "▍You", "run it", "", "▍Agent", "ok", "▸ ✓ bash  ls", "│ a.txt"]


def test_tool_lines_read_the_typed_details(editor: Editor) -> None:
    """A file change's counts and diff come from details whose ``type`` says they have them;
    other details (bash's, a failure's, JSON nulls) add nothing."""
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"
    edit = {"type": "edit", "path": "/w/a.txt", "replacements": 1, "diff": diff}
    edit |= {"firstChangedLine": 1, "added": 1, "removed": 1}
    bash = {"type": "bash", "command": "ls", "exitCode": None, "signal": None, "cwd": None}
    bash |= {"timedOut": False, "durationMs": 3.0, "truncated": False, "spillPath": None}
    bash |= {"totalBytes": 6, "diff": "not a change", "added": 9, "removed": 9}
    lines = feed(
        editor,
        start("c1", "edit", path="a.txt"),
        end("c1", "edit", "Edited a.txt.", details=edit),
        start("c2", "bash", command="ls"),
        end("c2", "bash", "a.txt", details=bash),
        start("c3", "edit", path="b.txt"),
        end("c3", "edit", "No such text.", isError=True, details={"type": "error"}),
    )
    text = "\n".join(lines)
    assert "▸ ✓ edit  a.txt  +1 -1" in text
    assert "│ +new" in text
    assert "+9 -9" not in text
    assert "not a change" not in text
    assert "│ a.txt" in text


DETAILS = """
local d = require('agentd.details')
local write = vim.fn.json_decode(...)
return {d.diff(write) or 'nil',
        d.counts(write) or 'nil', d.file_change({type = 'bash', path = '/x'}) or 'nil',
        d.file_change(vim.NIL) or 'nil'}
"""


def test_details_helpers_treat_json_null_as_absent(editor: Editor) -> None:
    """A write whose diff was omitted decodes with nulls or missing keys: no diff, no counts."""
    omitted = '{"type":"write","path":"/w/big.bin","created":false,"bytes":9,"lines":1,'
    omitted += '"diffOmitted":true,"diff":null}'
    assert editor.lua(DETAILS, omitted) == ["nil", "nil", "nil", "nil"]


NOTEBOOK_DIFF = """
local d = require('agentd.details')
local edit = vim.fn.json_decode(...)
local added, removed = d.counts(edit)
return {d.diff(edit) or 'nil', added, removed}
"""


def test_a_notebook_edit_shows_its_cell_diff(editor: Editor) -> None:
    """A notebook edit is a file change: its diff (the cell's) and counts are shown."""
    diff = "--- a/nb.ipynb#cell2\\n+++ b/nb.ipynb#cell2\\n@@ -1 +1 @@\\n-x\\n+y\\n"
    edit = (
        '{"type":"notebook_edit","path":"/w/nb.ipynb","action":"replace","index":2,'
        f'"cellId":"a1","cellType":"code","diff":"{diff}","added":1,"removed":1,"cells":3}}'
    )
    assert editor.lua(NOTEBOOK_DIFF, edit) == [diff.replace("\\n", "\n"), 1, 1]
