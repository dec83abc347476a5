"""Tool details of the document, search and skill tools (members of
:data:`agentd.protocol.tool_details.ToolDetails`, told apart by ``type``)."""

from __future__ import annotations

from typing import Literal

from agentd.protocol.base import Wire


class ReadNotebookDetails(Wire, tag="read_notebook", tag_field="type"):
    """A Jupyter notebook was read: ``shown`` of its ``cells`` cells from cell ``offset``
    (1-based), with ``images`` output images sent to the model. When the result stops early,
    ``truncated`` is true and ``next_offset`` is the cell to continue from."""

    path: str
    cells: int
    offset: int
    shown: int
    images: int = 0
    truncated: bool = False
    next_offset: int | None = None


NotebookAction = Literal["replace", "insert", "delete"]


class NotebookEditDetails(Wire, tag="notebook_edit", tag_field="type"):
    """One cell of a notebook was replaced, inserted or deleted.

    ``index`` is the cell's 1-based position (after the edit for replace and insert, before it
    for delete), ``cell_id`` its id (None in notebooks older than nbformat 4.5), ``cell_type``
    its type. ``diff`` is a unified diff of the cell's source (``--- a/PATH#cell``), with
    ``added``/``removed`` line counts; ``outputs_cleared`` when a code cell's outputs and
    execution count were dropped by the edit.
    """

    path: str
    action: NotebookAction
    index: int
    cell_id: str | None
    cell_type: str
    diff: str
    added: int
    removed: int
    cells: int
    outputs_cleared: bool = False


class ReadPdfDetails(Wire, tag="read_pdf", tag_field="type"):
    """A PDF was read: pages ``first`` to ``last`` (1-based) of ``pages``.

    ``image_pages`` are pages without a text layer: sent as images (``images`` of them) to a
    vision model, named only for a text model. ``truncated`` when the result stopped before
    ``last`` of what was asked (limits), with ``next_page`` to continue from.
    """

    path: str
    pages: int
    first: int
    last: int
    image_pages: list[int] = []
    images: int = 0
    truncated: bool = False
    next_page: int | None = None


class WebSearchHit(Wire):
    """One search result: its title, URL and a snippet of the page."""

    title: str
    url: str
    snippet: str = ""


class WebSearchDetails(Wire, tag="web_search", tag_field="type"):
    """A web search ran on ``backend`` (``searxng``, ``brave``, ``tavily``, or the provider's
    own server-side search): the ``query``, the ``results`` kept after the domain filters
    (``filtered`` dropped by them) and how long it took."""

    query: str
    backend: str
    results: list[WebSearchHit]
    filtered: int = 0
    duration_ms: float = 0.0


class SkillDetails(Wire, tag="skill", tag_field="type"):
    """A skill was loaded: its ``name``, the folder it lives in (``path``), where it was found
    (``source``: ``user`` or ``project``), and the tools it narrows the session to while it is
    followed (``allowed_tools``; None: no narrowing)."""

    name: str
    path: str
    source: str
    allowed_tools: list[str] | None = None
