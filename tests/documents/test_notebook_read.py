"""``read`` of a Jupyter notebook: cells in order with their outputs, images as image
content, paging by cell, and clear errors for files that are not notebooks."""

from __future__ import annotations

import json
from pathlib import Path

from agentd.protocol.content import ImageContent, TextContent
from agentd.protocol.document_details import ReadNotebookDetails
from agentd.tools.base import ToolContext
from agentd.tools.defaults import ToolSettings
from tests.documents.notebooks import cell, notebook_bytes, write_notebook
from tests.tools.conftest import call, text_of


def _text(result_output: object) -> str:
    assert isinstance(result_output, list)
    first = result_output[0]
    assert isinstance(first, TextContent)
    return first.text


async def test_cells_outputs_and_images(work: Path, ctx: ToolContext) -> None:
    write_notebook(work / "nb.ipynb")
    result = await call("read", ctx, path="nb.ipynb")
    assert not result.is_error, result.output
    text = _text(result.output)
    assert text.startswith("Notebook nb.ipynb: 5 cells, python (nbformat 4.5).")
    assert '<cell 1 id="md-1" type=markdown>\n# Title\nSome *notes*.\n</cell>' in text
    assert '<cell 2 id="code-2" type=code execution_count=1>' in text
    assert "[output 1 of cell 2: stdout]\nhello" in text
    assert "[output 1 of cell 3: error ZeroDivisionError: division by zero]" in text
    assert "ZeroDivisionError: division by zero" in text
    assert "\x1b" not in text  # the traceback's colours are gone
    assert "[output 1 of cell 4: text/plain, image/png image 1 attached]" in text
    assert "[output 2 of cell 4: text/plain]\n42" in text
    assert '<cell 5 id="raw-5" type=raw>\nraw text\n</cell>' in text
    images = [block for block in result.output if isinstance(block, ImageContent)]
    assert len(images) == 1
    assert images[0].mime_type == "image/png"
    details = result.details
    assert isinstance(details, ReadNotebookDetails)
    assert (details.cells, details.offset, details.shown, details.images) == (5, 1, 5, 1)
    assert details.path == str(work / "nb.ipynb")
    assert not details.truncated


async def test_text_model_is_told_about_images(work: Path) -> None:
    write_notebook(work / "nb.ipynb")
    ctx = ToolContext(cwd=work, settings=ToolSettings(accept_images=False))
    result = await call("read", ctx, path="nb.ipynb")
    text = text_of(result)
    assert "image/png image (the current model cannot view images)" in text


async def test_paging_by_cell(work: Path, ctx: ToolContext) -> None:
    write_notebook(work / "nb.ipynb")
    result = await call("read", ctx, path="nb.ipynb", offset=2, limit=2)
    text = text_of(result)
    assert "<cell 2 " in text
    assert "<cell 3 " in text
    assert "<cell 1 " not in text
    assert "<cell 4 " not in text
    assert "[Showing cells 2-3 of 5. Use offset=4 to continue.]" in text
    details = result.details
    assert isinstance(details, ReadNotebookDetails)
    assert (details.truncated, details.next_offset) == (True, 4)
    past = await call("read", ctx, path="nb.ipynb", offset=9)
    assert past.is_error
    assert "past the last cell" in text_of(past)


async def test_byte_limit_stops_between_cells(work: Path) -> None:
    cells = [cell("code", f"value_{i} = {'x' * 300!r}", f"c{i}") for i in range(50)]
    (work / "big.ipynb").write_bytes(notebook_bytes(cells))
    ctx = ToolContext(cwd=work, settings=ToolSettings(max_output_bytes=4096))
    result = await call("read", ctx, path="big.ipynb")
    text = text_of(result)
    details = result.details
    assert isinstance(details, ReadNotebookDetails)
    assert details.truncated
    assert details.next_offset is not None
    assert 1 < details.next_offset < 50
    assert f"Use offset={details.next_offset} to continue." in text
    assert len(text.encode()) < 4096 + 200


async def test_image_count_is_capped_with_a_note(work: Path, ctx: ToolContext) -> None:
    from tests.documents.notebooks import fixture_cells

    plot = fixture_cells()[3]
    cells = [{**plot, "id": f"p{i}"} for i in range(10)]
    (work / "plots.ipynb").write_bytes(notebook_bytes(cells))
    result = await call("read", ctx, path="plots.ipynb")
    images = [block for block in result.output if isinstance(block, ImageContent)]
    assert len(images) == 8
    assert "left out: 8 images per read" in _text(result.output)


async def test_malformed_notebooks_get_a_clear_error(work: Path, ctx: ToolContext) -> None:
    (work / "broken.ipynb").write_text('{"cells": [')
    result = await call("read", ctx, path="broken.ipynb")
    assert result.is_error
    assert "broken.ipynb is not a valid Jupyter notebook (its JSON is malformed" in text_of(result)
    (work / "wrong.ipynb").write_text(json.dumps({"cells": 3, "nbformat": 4}))
    result = await call("read", ctx, path="wrong.ipynb")
    assert result.is_error
    assert "wrong.ipynb is not a valid Jupyter notebook" in text_of(result)
    (work / "old.ipynb").write_text(json.dumps({"cells": [], "nbformat": 3}))
    result = await call("read", ctx, path="old.ipynb")
    assert "only version 4 is supported" in text_of(result)
