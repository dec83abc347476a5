"""The editor on the other end of ``agentd lsp``, as the front-end needs it: what its
capabilities allow, the documents it has open (their unsaved text), and requests and
notifications to it. A thin layer over pygls' :class:`~pygls.lsp.server.LanguageServer`.

Texts the front-end wrote through ``workspace/applyEdit`` are remembered until the editor's
own ``didChange``/``didOpen`` (or ``didClose``) supersedes them, so a read right after an edit
sees the edit even when the editor reports its changes late (Neovim debounces them).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol.types import METHOD_TO_TYPES
from pygls.uris import from_fs_path, to_fs_path

from agentd.protocol.controls import escape_controls

if TYPE_CHECKING:
    from cattrs import Converter
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer
    from pygls.workspace import TextDocument


class Written:
    """A text written through the editor: the document's version before the edit (None:
    it was not open) and the text."""

    __slots__ = ("text", "version")

    def __init__(self, version: int | None, text: str) -> None:
        self.version = version
        self.text = text


class Editor:
    """The connected editor (see the module docstring)."""

    def __init__(self, server: LanguageServer, converter: Converter) -> None:
        self.server = server
        self.converter = converter
        self.written: dict[str, Written] = {}

    # --- capabilities ---------------------------------------------------------------------

    @property
    def capabilities(self) -> types.ClientCapabilities:
        return self.server.client_capabilities

    def applies_edits(self) -> bool:
        """Whether the editor serves ``workspace/applyEdit``."""
        workspace = self.capabilities.workspace
        return bool(workspace and workspace.apply_edit)

    def document_changes(self) -> bool:
        """Whether edits may be ``documentChanges`` (versioned, any file)."""
        workspace = self.capabilities.workspace
        edit = workspace.workspace_edit if workspace else None
        return bool(edit and edit.document_changes)

    def creates_files(self) -> bool:
        """Whether edits may create files (resource operation ``create``)."""
        workspace = self.capabilities.workspace
        edit = workspace.workspace_edit if workspace else None
        operations = (edit.resource_operations or []) if edit else []
        return self.document_changes() and any(op.value == "create" for op in operations)

    def shows_documents(self) -> bool:
        window = self.capabilities.window
        return bool(window and window.show_document and window.show_document.support)

    def creates_progress(self) -> bool:
        """Whether the editor accepts ``window/workDoneProgress/create``."""
        window = self.capabilities.window
        return bool(window and window.work_done_progress)

    def position_encoding(self) -> str:
        encoding = self.server.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or "utf-16")

    # --- documents ------------------------------------------------------------------------

    def document(self, path: str | Path) -> TextDocument | None:
        """The open document of ``path`` (an absolute path), if the editor has it open."""
        wanted = str(path)
        documents = self.server.workspace.text_documents
        uri = from_fs_path(wanted)
        if uri is not None and uri in documents:
            return documents[uri]  # type: ignore[no-any-return]
        for key, document in documents.items():
            if to_fs_path(key) == wanted:
                return document  # type: ignore[no-any-return]
        return None

    @staticmethod
    def uri_of(path: str | Path) -> str:
        """The ``file:`` URI of an absolute path (as pygls spells it)."""
        return from_fs_path(str(path)) or Path(path).as_uri()

    def text_of(self, path: str | Path) -> str | None:
        """The text the editor holds for ``path`` (its buffer, unsaved changes included, or
        what was just written through it), None when it holds none."""
        uri = self.uri_of(path)
        document = self.document(path)
        written = self.written.get(uri)
        if written is not None:
            stale = document is not None and (
                written.version is None or (document.version or 0) > written.version
            )
            if not stale:
                return written.text
            del self.written[uri]
        return None if document is None else document.source

    def known_version(self, path: str | Path) -> int | None:
        """The open document's version as the editor has it now: None while a text written
        through the editor is not yet confirmed by its ``didChange`` (the editor's version
        moved on by a number it alone knows; an edit then goes unversioned)."""
        document = self.document(path)
        if document is None:
            return None
        self.text_of(path)  # drops a written text the editor has confirmed
        return None if self.uri_of(path) in self.written else document.version

    def forget(self, uri: str) -> None:
        """The editor closed ``uri``: its disk file is the truth again."""
        self.written.pop(uri, None)

    # --- messages -------------------------------------------------------------------------

    def notify(self, method: str, params: Any) -> None:
        """One notification (``params`` plain JSON values)."""
        self.server.protocol.notify(method, self._typed(method, params))

    async def request(self, method: str, params: Any) -> Any:
        """One request to the editor (``params`` plain JSON values); its result as
        lsprotocol types."""
        return await self.server.protocol.send_request_async(method, self._typed(method, params))

    def _typed(self, method: str, params: Any) -> Any:
        """``params`` as the lsprotocol type of ``method`` (pygls sends only those)."""

        params_type: Any = METHOD_TO_TYPES[method][2]
        return params if params_type is None else self.converter.structure(params, params_type)

    def log(self, message: str, kind: int = 2) -> None:
        """``window/logMessage`` (``kind`` 1 error, 2 warning, 3 info, 4 log), control
        characters escaped (editors in a terminal print it)."""
        self.notify("window/logMessage", {"type": kind, "message": escape_controls(message)})
