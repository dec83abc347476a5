"""agentctl's lines for the notebook, PDF, web search and skill tools."""

from __future__ import annotations

from agentctl.render.toolfmt import describe_call, describe_outcome
from agentd.protocol.document_details import (
    NotebookEditDetails,
    ReadNotebookDetails,
    ReadPdfDetails,
    SkillDetails,
    WebSearchDetails,
    WebSearchHit,
)


def test_notebook_calls_and_outcomes() -> None:
    args = {"path": "/w/nb.ipynb", "cell_id": "abc", "action": "delete"}
    assert describe_call("notebook_edit", args, "/w") == "nb.ipynb cell abc (delete)"
    assert describe_call("notebook_edit", {"path": "nb.ipynb", "index": 3}) == (
        "nb.ipynb cell #3 (replace)"
    )
    assert describe_call("notebook_edit", {"path": 4}) == "(replace)"
    edit = NotebookEditDetails(
        path="/w/nb.ipynb", action="replace", index=2, cell_id="abc", cell_type="code",
        diff="", added=1, removed=2, cells=5, outputs_cleared=True,
    )  # fmt: skip
    assert describe_outcome(edit, False, "") == "replaced code cell 2 (+1 −2) · outputs cleared"
    read = ReadNotebookDetails(path="/w/nb.ipynb", cells=9, offset=3, shown=4, images=2)
    assert describe_outcome(read, False, "") == "cells 3-6 of 9 · 2 image(s)"


def test_pdf_search_and_skill_outcomes() -> None:
    assert describe_call("read", {"path": "/w/a.pdf", "pages": "3-5"}, "/w") == "a.pdf pages 3-5"
    pdf = ReadPdfDetails(path="/w/a.pdf", pages=500, first=1, last=20, image_pages=[4])
    assert describe_outcome(pdf, False, "") == "pages 1-20 of 500 · 1 scanned"
    assert describe_call("web_search", {"query": "msgspec structs"}) == "msgspec structs"
    hits = [WebSearchHit(title="t", url="https://e.org")]
    search = WebSearchDetails(query="q", backend="searxng", results=hits)
    assert describe_outcome(search, False, "") == "1 result · searxng"
    assert describe_call("skill", {"name": "pdf-tools"}) == "pdf-tools"
    skill = SkillDetails(name="pdf-tools", path="/s/pdf-tools", source="project")
    assert describe_outcome(skill, False, "") == "skill: pdf-tools (project)"
    assert describe_outcome(skill, True, "Unknown skill") == "Unknown skill"
