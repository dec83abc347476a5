"""The pure parts of the ACP front-end: titles and kinds, diff content, prompts, the mapper."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.acp.prompt import prompt_parts
from agentd.acp.titles import tool_kind, tool_title
from agentd.acp.toolcontent import LIVE_TAIL_CHARS, diff_hunks, fenced, proposed_content
from agentd.acp.updates import UpdateMapper
from agentd.errors import InvalidParams
from agentd.protocol import acp
from agentd.protocol.events import (
    MessageStart,
    MessageUpdate,
    PermissionResolved,
    TextDelta,
    ToolCallStartDelta,
    ToolExecutionUpdate,
    TurnEnd,
)
from agentd.tools.files.diffs import summarize_change

CWD = "/home/me/app"


@pytest.mark.parametrize(
    ("name", "args", "title", "kind"),
    [
        ("edit", {"path": "src/app.py"}, "Edit src/app.py", "edit"),
        ("write", {"path": "/etc/hosts"}, "Write /etc/hosts", "edit"),
        ("read", {"path": "a.py", "offset": 10, "limit": 5}, "Read a.py (lines 10-14)", "read"),
        ("read", {"path": f"{CWD}/a.py", "offset": 3}, "Read a.py (from line 3)", "read"),
        ("bash", {"command": "npm test"}, "Run npm test", "execute"),
        ("bash", {"command": "rm -rf build"}, "Run rm -rf build", "delete"),
        ("bash", {"command": "/bin/mv a b"}, "Run /bin/mv a b", "move"),
        ("bash", {"command": "curl -s https://x"}, "Run curl -s https://x", "fetch"),
        ("bash", {"command": "make\nmake install"}, "Run make…", "execute"),
        ("grep", {"pattern": "TODO", "path": "src"}, 'Search for "TODO" in src', "search"),
        ("find", {"pattern": "*.py"}, "Find *.py in .", "search"),
        ("ls", {}, "List .", "read"),
        ("undo_edit", {"path": "a.py"}, "Undo the last edit of a.py", "edit"),
        (
            "notebook_edit",
            {"path": "n.ipynb", "index": 2},
            "Notebook n.ipynb: replace cell 2",
            "edit",
        ),
        ("skill", {"name": "pdf-forms"}, "Load the skill pdf-forms", "read"),
        ("web_search", {"query": "msgspec"}, 'Search the web for "msgspec"', "search"),
        ("custom", {}, "custom", "other"),
    ],
)
def test_titles_are_written_for_people(name: str, args: dict, title: str, kind: str) -> None:
    native = {"edit": "edit", "write": "edit", "undo_edit": "edit", "read": "read"}
    native |= {"notebook_edit": "edit", "skill": "read", "web_search": "search"}
    native |= {"bash": "execute", "grep": "search", "find": "search", "ls": "read"}
    assert tool_title(name, args, CWD) == title
    assert tool_kind(name, args, native.get(name, "other")) == kind


def test_long_commands_are_clipped() -> None:
    title = tool_title("bash", {"command": "echo " + "x" * 200}, CWD)
    assert len(title) <= 4 + 80
    assert title.endswith("…")


def test_diff_hunks_are_old_and_new_regions() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 30))
    new = old.replace("line 2\n", "line two\n").replace("line 25\n", "")
    hunks = diff_hunks(summarize_change(old, new, "f.txt", created=False).diff, "/f.txt")
    assert len(hunks) == 2
    assert "line 2\n" in hunks[0].old_text
    assert "line two\n" in hunks[0].new_text
    assert "line 25\n" in hunks[1].old_text
    assert "line 25\n" not in hunks[1].new_text
    assert all(h.path == "/f.txt" for h in hunks)


def test_fences_outgrow_backticks_inside() -> None:
    assert fenced("a ``` b") == "````\na ``` b\n````"


def test_prompt_parts() -> None:
    text, images = prompt_parts(
        [
            acp.TextBlock(text="fix it"),
            acp.ResourceLinkBlock(uri="file:///p/my%20file.py", name="my file.py"),
            acp.ResourceBlock(resource=acp.ResourceContents(uri="file:///p/a.py", text="x = 1")),
            acp.ResourceBlock(
                resource=acp.ResourceContents(
                    uri="file:///p/i.png", blob="AA", mime_type="image/png"
                )
            ),
            acp.ResourceBlock(resource=acp.ResourceContents(uri="file:///p/z.bin", blob="AA")),
            acp.ImageBlock(data="BB", mime_type="image/jpeg"),
        ]
    )
    assert text.split("\n\n") == [
        "fix it",
        "Referenced: /p/my file.py",
        '<file path="/p/a.py">\nx = 1\n</file>',
        "Attached image: /p/i.png",
        "Attached /p/z.bin (application/octet-stream, binary; not shown)",
    ]
    assert [i.mime_type for i in images] == ["image/png", "image/jpeg"]


@pytest.mark.parametrize(
    "blocks",
    [[], [acp.TextBlock(text="  ")], [acp.AudioBlock(data="AA", mime_type="audio/wav")]],
)
def test_bad_prompts_are_invalid_params(blocks: list) -> None:
    with pytest.raises(InvalidParams):
        prompt_parts(blocks)


def test_mapper_streams_deltas_and_ignores_what_acp_has_no_place_for() -> None:
    mapper = UpdateMapper(CWD)
    assert mapper.map(MessageStart(message_id="m1", role="assistant")) == []
    (chunk,) = mapper.map(MessageUpdate(delta=TextDelta(text="hi")))
    assert chunk == acp.AgentMessageChunk(content=acp.TextBlock(text="hi"), message_id="m1")
    assert mapper.map(MessageUpdate(delta=ToolCallStartDelta(id="c", name="bash"))) == []
    assert mapper.map(PermissionResolved(tool_call_id="c", outcome="reject_once")) == []
    (resumed,) = mapper.map(PermissionResolved(tool_call_id="c", outcome="allow_once"))
    assert resumed.status == "in_progress"
    mapper.map(TurnEnd(turn=1, stop_reason="length"))
    assert mapper.last_turn_stop == "length"


def test_running_output_is_a_bounded_tail() -> None:
    mapper = UpdateMapper(CWD)
    sizes = []
    for i in range(500):
        (update,) = mapper.map(ToolExecutionUpdate(tool_call_id="c", output=f"{i:04} " * 50 + "\n"))
        sizes.append(len(update.content[0].content.text))
    assert max(sizes) <= LIVE_TAIL_CHARS + 20
    assert "0499" in update.content[0].content.text


def test_approval_previews(tmp_path: Path) -> None:
    edit = proposed_content("edit", {"path": "a", "old_string": "x", "new_string": "y"}, "/p/a")
    assert [(d.old_text, d.new_text) for d in edit] == [("x", "y")]
    pairs = [{"old_string": "1", "new_string": "2"}, {"old_string": "3", "new_string": "4"}]
    assert [d.new_text for d in proposed_content("edit", {"edits": pairs}, "/p/a")] == ["2", "4"]
    existing = tmp_path / "e.txt"
    existing.write_text("old\n")
    (write,) = proposed_content("write", {"content": "new\n"}, str(existing))
    assert (write.old_text, write.new_text) == ("old\n", "new\n")
    (new,) = proposed_content("write", {"content": "n"}, str(tmp_path / "missing"))
    assert new.old_text is None
    (command,) = proposed_content("bash", {"command": "make test"}, None)
    assert command.content.text == "```\nmake test\n```"
    assert proposed_content("read", {"path": "a"}, "/p/a") == []
