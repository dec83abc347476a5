"""``notebook_edit``: replace, insert and delete keep the notebook valid and every byte of
what they do not touch; undo, stale files, the sandbox, rules and the approval preview."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from agentd.permissions.policy import PermissionPolicy
from agentd.protocol.document_details import NotebookEditDetails
from agentd.session.preview import approval_preview
from agentd.tools import build_tools
from agentd.tools.base import ToolContext
from tests.documents.notebooks import cell, notebook_bytes, write_notebook
from tests.tools.conftest import call, text_of


def _valid(path: Path) -> dict[str, object]:
    data = json.loads(path.read_bytes())
    nbformat.validate(data)
    return data


def _cell_bytes(data: bytes, cell_id: str) -> bytes:
    """The exact bytes of a cell in the file (its object, as Jupyter wrote it)."""
    start = data.index(b'"id": "' + cell_id.encode())
    start = data.rindex(b"  {\n", 0, start)
    end = data.index(b"\n  }", start) + 4
    return data[start:end]


async def test_replace_clears_outputs_and_keeps_the_rest(work: Path, ctx: ToolContext) -> None:
    path = work / "nb.ipynb"
    before = write_notebook(path)
    result = await call(
        "notebook_edit", ctx, path="nb.ipynb", cell_id="code-2", source="print('bye')\n"
    )
    assert not result.is_error, text_of(result)
    assert text_of(result) == (
        "Replaced code cell 2 (id code-2) of nb.ipynb (+1 −2); the notebook now has 5 cells. "
        "Its outputs and execution count were cleared."
    )
    data = _valid(path)
    cells = data["cells"]
    assert isinstance(cells, list)
    edited = cells[1]
    assert edited["source"] == ["print('bye')\n"]
    assert edited["outputs"] == []
    assert edited["execution_count"] is None
    assert edited["id"] == "code-2"
    after = path.read_bytes()
    for other in ("md-1", "code-3", "code-4", "raw-5"):
        assert _cell_bytes(after, other) == _cell_bytes(before, other)
    head = before[: before.index(_cell_bytes(before, "code-2"))]
    assert after.startswith(head)
    tail = before[before.index(_cell_bytes(before, "code-3")) :]
    assert after.endswith(tail)
    details = result.details
    assert isinstance(details, NotebookEditDetails)
    assert details.diff.startswith("--- a/nb.ipynb#cell2\n+++ b/nb.ipynb#cell2\n")
    assert "-print('hello')\n" in details.diff
    assert "+print('bye')\n" in details.diff
    assert (details.action, details.index, details.cells) == ("replace", 2, 5)
    assert details.outputs_cleared


async def test_insert_gives_new_cells_ids(work: Path, ctx: ToolContext) -> None:
    path = work / "nb.ipynb"
    before = write_notebook(path)
    first = await call(
        "notebook_edit", ctx, path="nb.ipynb", action="insert", index=1,
        cell_type="markdown", source="Intro",
    )  # fmt: skip
    assert not first.is_error, text_of(first)
    end = await call("notebook_edit", ctx, path="nb.ipynb", action="insert", index=7, source="z=2")
    assert not end.is_error, text_of(end)
    data = _valid(path)
    cells = data["cells"]
    assert isinstance(cells, list)
    assert [c["cell_type"] for c in cells] == [
        "markdown", "markdown", "code", "code", "code", "raw", "code",
    ]  # fmt: skip
    ids = [c["id"] for c in cells]
    assert len(set(ids)) == 7
    assert cells[0]["source"] == ["Intro"]
    assert cells[6] == {
        "cell_type": "code", "execution_count": None, "id": ids[6], "metadata": {},
        "outputs": [], "source": ["z=2"],
    }  # fmt: skip
    after = path.read_bytes()
    for other in ("md-1", "code-2", "code-3", "code-4", "raw-5"):
        assert _cell_bytes(after, other) == _cell_bytes(before, other)
    details = end.details
    assert isinstance(details, NotebookEditDetails)
    assert (details.action, details.index, details.cells, details.cell_id) == (
        "insert", 7, 7, ids[6],
    )  # fmt: skip


async def test_delete_and_empty_notebook(work: Path, ctx: ToolContext) -> None:
    path = work / "nb.ipynb"
    before = write_notebook(path)
    result = await call("notebook_edit", ctx, path="nb.ipynb", action="delete", cell_id="code-3")
    assert not result.is_error, text_of(result)
    cells = _valid(path)["cells"]
    assert isinstance(cells, list)
    assert [c["id"] for c in cells] == ["md-1", "code-2", "code-4", "raw-5"]
    assert _cell_bytes(path.read_bytes(), "code-4") == _cell_bytes(before, "code-4")
    for _ in range(4):
        gone = await call("notebook_edit", ctx, path="nb.ipynb", action="delete", index=1)
        assert not gone.is_error, text_of(gone)
    assert _valid(path)["cells"] == []
    again = await call("notebook_edit", ctx, path="nb.ipynb", action="insert", index=1, source="a")
    assert not again.is_error, text_of(again)
    cells = _valid(path)["cells"]
    assert isinstance(cells, list)
    assert [c["source"] for c in cells] == [["a"]]


async def test_errors_are_clear_and_write_nothing(work: Path, ctx: ToolContext) -> None:
    path = work / "nb.ipynb"
    before = write_notebook(path)
    missing = await call("notebook_edit", ctx, path="nb.ipynb", cell_id="nope", source="x")
    assert "No cell with id 'nope' in nb.ipynb. Cell ids: md-1, code-2" in text_of(missing)
    no_source = await call("notebook_edit", ctx, path="nb.ipynb", index=1)
    assert "replace needs `source`" in text_of(no_source)
    far = await call("notebook_edit", ctx, path="nb.ipynb", index=9, source="x")
    assert "index 9 is out of range: nb.ipynb has 5 cells" in text_of(far)
    (work / "notes.txt").write_text("x")
    other = await call("notebook_edit", ctx, path="notes.txt", index=1, source="x")
    assert "not a notebook" in text_of(other)
    (work / "bad.ipynb").write_text('{"cells": [{"cell_type": "code"}], "nbformat": 4}')
    invalid = await call("notebook_edit", ctx, path="bad.ipynb", index=1, source="x")
    assert invalid.is_error
    assert "bad.ipynb is not a valid notebook" in text_of(invalid)
    assert path.read_bytes() == before


async def test_stale_notebook_is_refused_and_undo_restores(work: Path, ctx: ToolContext) -> None:
    path = work / "nb.ipynb"
    before = write_notebook(path)
    await call("read", ctx, path="nb.ipynb")
    path.write_bytes(notebook_bytes([cell("code", "changed", "c1")]))
    stale = await call("notebook_edit", ctx, path="nb.ipynb", index=1, source="x")
    assert "has changed on disk since you last read it" in text_of(stale)
    path.write_bytes(before)
    await call("read", ctx, path="nb.ipynb")
    edited = await call("notebook_edit", ctx, path="nb.ipynb", index=1, source="new")
    assert not edited.is_error, text_of(edited)
    undone = await call("undo_edit", ctx, path="nb.ipynb")
    assert not undone.is_error, text_of(undone)
    assert path.read_bytes() == before


async def test_sandbox_and_control_files(tmp_path: Path) -> None:
    workspace = (tmp_path / "ws").resolve()
    workspace.mkdir()
    outside = tmp_path / "out.ipynb"
    write_notebook(outside)
    ctx = ToolContext(cwd=workspace, workspace=workspace)
    escaped = await call("notebook_edit", ctx, path=str(outside), index=1, source="x")
    assert escaped.is_error
    assert "outside" in text_of(escaped)
    (workspace / "link.ipynb").symlink_to(outside)
    linked = await call("notebook_edit", ctx, path="link.ipynb", index=1, source="x")
    assert linked.is_error
    (workspace / ".agentd").mkdir()
    control_before = write_notebook(workspace / ".agentd" / "x.ipynb")
    control = await call("notebook_edit", ctx, path=".agentd/x.ipynb", index=1, source="x")
    assert control.is_error
    assert (workspace / ".agentd" / "x.ipynb").read_bytes() == control_before
    assert outside.read_bytes() == notebook_bytes()


@pytest.mark.parametrize(
    ("mode", "allow", "deny", "path", "action"),
    [
        ("ask", [], [], "nb.ipynb", "ask"),
        ("read-only", [], [], "nb.ipynb", "deny"),
        ("ask", ["notebook_edit(notes/**)"], [], "notes/a.ipynb", "allow"),
        ("ask", ["notebook_edit(notes/**)"], [], "other/a.ipynb", "ask"),
        ("auto", [], ["notebook_edit(secret.ipynb)"], "secret.ipynb", "deny"),
    ],
)
def test_rules_and_modes(
    work: Path, mode: str, allow: list[str], deny: list[str], path: str, action: str
) -> None:
    policy = PermissionPolicy(mode, allow, deny, cwd=work, workspace=work)
    tool = build_tools(["notebook_edit"])["notebook_edit"]
    decision = policy.check(tool, {"path": path, "index": 1, "source": "x"})
    assert decision.action == action, decision.reason


async def test_approval_preview_shows_the_cell_diff(work: Path, ctx: ToolContext) -> None:
    write_notebook(work / "nb.ipynb")
    tool = build_tools(["notebook_edit"])["notebook_edit"]
    args = {"path": "nb.ipynb", "cell_id": "md-1", "source": "# New title\nSome *notes*."}
    preview = await approval_preview(tool, args, ctx)
    assert preview is not None
    assert preview.kind == "diff"
    assert preview.path == "nb.ipynb#cell1"
    assert preview.diff is not None
    assert "-# Title\n+# New title\n" in preview.diff
    assert (preview.added, preview.removed) == (1, 1)
    wrong = await approval_preview(tool, {"path": "nb.ipynb", "cell_id": "zz", "source": ""}, ctx)
    assert wrong is not None
    assert wrong.error is not None
    assert "No cell with id 'zz'" in wrong.error


async def test_acp_shows_the_cell_diff(work: Path, ctx: ToolContext) -> None:
    from agentd.acp.toolcontent import result_content
    from agentd.protocol.acp import DiffItem

    write_notebook(work / "nb.ipynb")
    args = {"path": "nb.ipynb", "cell_id": "md-1", "source": "# Other\nSome *notes*."}
    result = await call("notebook_edit", ctx, **args)
    path = str(work / "nb.ipynb")
    (item,) = result_content("notebook_edit", args, [], False, result.details, path)
    assert isinstance(item, DiffItem)
    assert item.path == path
    assert "# Title" in (item.old_text or "")
    assert "# Other" in item.new_text


class EditorBuffers:
    """An editor holding open files (the FileAccess contract): reads see its unsaved text,
    writes land in it, files it does not hold go to the disk."""

    def __init__(self, buffers: dict[Path, str]) -> None:
        self.buffers = buffers

    async def read_text(self, path: Path) -> str | None:
        return self.buffers.get(path)

    async def write_text(self, path: Path, text: str) -> bool | None:
        if path not in self.buffers:
            return None
        self.buffers[path] = text
        return True


async def test_read_and_edit_go_through_the_editor(work: Path) -> None:
    path = work / "nb.ipynb"
    on_disk = write_notebook(path)
    unsaved = notebook_bytes([cell("code", "unsaved = True", "u1")]).decode()
    editor = EditorBuffers({path: unsaved})
    ctx = ToolContext(cwd=work, files=editor)
    read = await call("read", ctx, path="nb.ipynb")
    assert "unsaved = True" in text_of(read)
    edited = await call("notebook_edit", ctx, path="nb.ipynb", cell_id="u1", source="saved = 1")
    assert not edited.is_error, text_of(edited)
    assert '"saved = 1"' in editor.buffers[path]
    assert path.read_bytes() == on_disk  # the editor holds the change, not the disk
