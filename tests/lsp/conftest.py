"""The LSP test harness: pygls' own ``LanguageClient`` as the editor, spawning ``agentd lsp``.

:class:`Box` is an isolated home (:mod:`tests.harness`) whose mock LLM plays
:data:`tests.lsp.scenarios.SCENARIOS` before the built-in ones. :class:`Editor` is an LSP
client like an editor's: it keeps buffers (``didOpen``/``didChange``), applies
``workspace/applyEdit`` to them (or refuses, as told, and refuses edits for another version),
answers ``window/showMessageRequest`` with a chosen button, records ``$/progress``,
``window/showDocument`` and ``window/logMessage``. Its capabilities are what a test asks for.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.client import LanguageClient
from pygls.protocol import default_converter

from tests.harness import IsolatedHome, scaled
from tests.lsp.scenarios import SCENARIOS


class Box(IsolatedHome):
    """An isolated home whose mock LLM plays :data:`SCENARIOS` first."""

    prefix = "lsp-"

    def __init__(self) -> None:
        super().__init__()
        self.use_scenarios(SCENARIOS)
        self.lsp_log = self.root / "lsp.log"

    def argv(self, *extra: str) -> list[str]:
        """``agentd lsp`` with the mock provider, its log in :attr:`lsp_log`."""
        return self.agentd("lsp", "--provider", "mock", "--log-file", str(self.lsp_log), *extra)


@pytest.fixture
def box() -> Iterator[Box]:
    with Box() as made:
        yield made


def _client_converter() -> Any:
    """pygls' converter, with ``Command | CodeAction`` told apart by ``command``'s type (a
    CodeAction carries a Command object there; pygls' own hook takes it for a Command)."""
    converter = default_converter()

    def command_or_action(obj: Any, _: Any) -> Any:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, command_or_action)
    return converter


@dataclass
class Editor:
    """An LSP client that behaves like an editor (see the module docstring)."""

    apply_edits: bool = True
    refuse_edits: str | None = None
    document_changes: bool = True
    create_files: bool = True
    create_progress: bool = True
    show_documents: bool = True
    lazy_code_actions: bool = True
    approval: str | list[str] | None = "Allow once"
    """The button chosen (``wait``: none, ever); a list: one per request, in turn."""
    change_delay: float = 0.0
    """Seconds before a ``didChange`` after an applied edit (Neovim debounces them)."""
    buffers: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    edits: list[Any] = field(default_factory=list)
    approvals: list[str] = field(default_factory=list)
    progress: dict[Any, list[dict[str, Any]]] = field(default_factory=dict)
    created_tokens: list[Any] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    logged: list[str] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    client: LanguageClient = field(init=False)

    def __post_init__(self) -> None:
        self.client = LanguageClient("lsp-tests", "1", converter_factory=_client_converter)
        self._register()

    def capabilities(self) -> types.ClientCapabilities:
        operations = [types.ResourceOperationKind.Create] if self.create_files else []
        resolve = (
            types.ClientCodeActionResolveOptions(properties=["command"])
            if self.lazy_code_actions
            else None
        )
        return types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                apply_edit=self.apply_edits,
                workspace_edit=types.WorkspaceEditClientCapabilities(
                    document_changes=self.document_changes, resource_operations=operations
                ),
            ),
            window=types.WindowClientCapabilities(
                work_done_progress=self.create_progress,
                show_document=types.ShowDocumentClientCapabilities(support=self.show_documents),
            ),
            text_document=types.TextDocumentClientCapabilities(
                code_action=types.CodeActionClientCapabilities(
                    resolve_support=resolve, data_support=True
                )
            ),
        )

    def _register(self) -> None:
        client = self.client
        converter = get_converter()

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            edit = converter.unstructure(params.edit)
            self.edits.append(edit)
            self.changed.set()
            if self.refuse_edits is not None:
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason=self.refuse_edits
                )
            stale = self._stale(edit)
            if stale is not None:  # as an editor does: an edit for another version is refused
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason=stale)
            self._apply(edit)
            return types.ApplyWorkspaceEditResult(applied=True)

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def ask(params: types.ShowMessageRequestParams) -> Any:
            self.approvals.append(params.message)
            self.changed.set()
            if self.approval == "wait":
                await asyncio.sleep(3600)
            if self.approval is None:
                return None
            if isinstance(self.approval, list):
                return types.MessageActionItem(title=self.approval.pop(0))
            return types.MessageActionItem(title=self.approval)

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params: types.WorkDoneProgressCreateParams) -> None:
            self.created_tokens.append(params.token)

        @client.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            value = (
                params.value
                if isinstance(params.value, dict)
                else converter.unstructure(params.value)
            )
            self.progress.setdefault(params.token, []).append(value)
            self.changed.set()

        @client.feature(types.WINDOW_SHOW_DOCUMENT)
        def show(params: types.ShowDocumentParams) -> types.ShowDocumentResult:
            self.shown.append(params.uri)
            self.changed.set()
            return types.ShowDocumentResult(success=True)

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def logged(params: types.LogMessageParams) -> None:
            self.logged.append(params.message)

    # --- buffers --------------------------------------------------------------------------

    def open(self, path: Path, text: str) -> str:
        """Open ``path`` with the unsaved ``text`` (``didOpen``); its URI."""
        uri = path.as_uri()
        self.buffers[uri] = text
        self.versions[uri] = 1
        item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        return uri

    def _stale(self, edit: dict[str, Any]) -> str | None:
        """Why a versioned edit does not fit the buffer (None: it fits)."""
        for change in edit.get("documentChanges", []):
            document = change.get("textDocument") or {}
            version = document.get("version")
            held = self.versions.get(document.get("uri", ""))
            if version is not None and held is not None and version != held:
                return f"version {version} is not the buffer's version {held}"
        return None

    def _apply(self, edit: dict[str, Any]) -> None:
        """Apply a workspace edit to the buffers and tell the server (``didChange``)."""
        for change in edit.get("documentChanges", []):
            if change.get("kind") == "create":
                self.buffers.setdefault(change["uri"], "")
                self.versions.setdefault(change["uri"], 0)
            elif "edits" in change:
                self._edit(change["textDocument"]["uri"], change["edits"])
        for uri, edits in (edit.get("changes") or {}).items():
            self._edit(uri, edits)

    def _edit(self, uri: str, edits: list[dict[str, Any]]) -> None:
        text = self.buffers.get(uri)
        if text is None:
            text = Path(uri.removeprefix("file://")).read_text()
        for one in sorted(edits, key=lambda e: _offset(text, e["range"]["start"]), reverse=True):
            start = _offset(text, one["range"]["start"])
            end = _offset(text, one["range"]["end"])
            text = text[:start] + one["newText"] + text[end:]
        self.buffers[uri] = text
        if uri in self.versions:
            self.versions[uri] += 1
            change = types.TextDocumentContentChangeWholeDocument(text=text)
            document = types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri])
            params = types.DidChangeTextDocumentParams(
                text_document=document, content_changes=[change]
            )
            if self.change_delay:
                loop = asyncio.get_running_loop()
                loop.call_later(self.change_delay, self.client.text_document_did_change, params)
            else:
                self.client.text_document_did_change(params)

    # --- helpers --------------------------------------------------------------------------

    async def run(self, command: str, argument: Any, **params: Any) -> Any:
        """``workspace/executeCommand`` with one argument."""
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=[argument], **params)
        )

    async def wait_for(self, condition: Callable[[], bool], timeout: float = 30) -> None:
        async with asyncio.timeout(scaled(timeout)):
            while not condition():
                self.changed.clear()
                await self.changed.wait()

    def reports(self, token: Any) -> list[dict[str, Any]]:
        return [v for v in self.progress.get(token, []) if v.get("kind") == "report"]


def _offset(text: str, position: dict[str, int]) -> int:
    """Offset of an LSP position in ASCII ``text`` (the tests' texts are ASCII)."""
    lines = text.split("\n")
    line = min(position["line"], len(lines))
    return sum(len(x) + 1 for x in lines[:line]) + position["character"]


@contextlib.asynccontextmanager
async def spawn(box: Box, editor: Editor, *extra: str) -> AsyncIterator[types.InitializeResult]:
    """``agentd lsp`` spawned by the client and initialized with the project as workspace."""
    argv = box.argv(*extra)
    client = editor.client
    await client.start_io(argv[0], *argv[1:], env=box.env, cwd=str(box.project))
    folder = types.WorkspaceFolder(uri=box.project.as_uri(), name="proj")
    try:
        async with asyncio.timeout(scaled(30)):
            result = await client.initialize_async(
                types.InitializeParams(
                    capabilities=editor.capabilities(),
                    root_uri=box.project.as_uri(),
                    workspace_folders=[folder],
                )
            )
        client.initialized(types.InitializedParams())
        yield result
    finally:
        await _stop(client)


async def _stop(client: LanguageClient) -> None:
    """``shutdown`` and ``exit``, then wait for the server to end (killed if it hangs)."""
    server = client._server
    with contextlib.suppress(Exception):
        async with asyncio.timeout(scaled(15)):
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()
    if server is not None and server.returncode is None:
        server.kill()
        await server.wait()
