"""One language server for one (definition, root): its lifecycle, documents and diagnostics.

:class:`LanguageServer` starts its process on first use (:meth:`ready`): ``initialize`` with
the workspace folder and the capabilities agentd implements (:func:`client_capabilities`),
``initialized``, then the indexing the server reports with ``$/progress`` is awaited until the
definition's ``startup_timeout``. A server that does not answer ``initialize`` in that time, or
exits, is stopped and counts against the restart budget (:data:`MAX_RESTARTS` with back-off);
past it the server stays ``crashed`` with its reason, and every use gets that reason at once.

Documents: :meth:`sync` opens a file (``didOpen``) or sends its whole new text (``didChange``
with the next version, then ``didSave``); documents unused for :data:`DOCUMENT_IDLE_SECONDS`
are closed. Diagnostics come pushed (``publishDiagnostics``, kept per document) or pulled
(``textDocument/diagnostic``) when the server offers that.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from lsprotocol import types

from agentd.langserver.client import RequestFailed, ServerLost, ServerProcess
from agentd.langserver.defs import ServerDef, language_id
from agentd.log import get_logger

log = get_logger("agentd.langserver")

State = Literal["not_started", "starting", "indexing", "ready", "crashed", "stopped"]
MAX_RESTARTS = 3
BACKOFF_SECONDS = (0.5, 2.0, 8.0)
DOCUMENT_IDLE_SECONDS = 300.0
QUIET_SECONDS = 1.0
"""How long a server that just started must send nothing before it counts as ready."""
UNVERSIONED_SETTLE = 0.3  # quiet after an unversioned push before it counts as the answer
MAX_SETTLE = 2.0  # ... at most, for a server slow to send its first push after a change
ENCODINGS = (
    types.PositionEncodingKind.Utf16,
    types.PositionEncodingKind.Utf8,
    types.PositionEncodingKind.Utf32,
)


def client_capabilities() -> types.ClientCapabilities:
    """What agentd really does with a server's answers."""
    sync = types.TextDocumentSyncClientCapabilities(did_save=True)
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=list(ENCODINGS)),
        window=types.WindowClientCapabilities(work_done_progress=True),
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            workspace_folders=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            symbol=types.WorkspaceSymbolClientCapabilities(),
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=sync,
            definition=types.DefinitionClientCapabilities(link_support=True),
            implementation=types.ImplementationClientCapabilities(link_support=True),
            references=types.ReferenceClientCapabilities(),
            hover=types.HoverClientCapabilities(
                content_format=[types.MarkupKind.PlainText, types.MarkupKind.Markdown]
            ),
            document_symbol=types.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True
            ),
            rename=types.RenameClientCapabilities(prepare_support=False),
            call_hierarchy=types.CallHierarchyClientCapabilities(),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            diagnostic=types.DiagnosticClientCapabilities(),
        ),
    )


class Document:
    __slots__ = ("text", "used", "version")

    def __init__(self, text: str) -> None:
        self.text, self.version, self.used = text, 1, time.monotonic()


class LanguageServer:
    """The server of ``definition`` for the project at ``root`` (see the module docstring).
    ``argv_prefix``/``pass_fds``: the sandbox wrapper of the sessions it serves."""

    def __init__(
        self,
        definition: ServerDef,
        root: Path,
        env: Mapping[str, str],
        argv_prefix: tuple[str, ...] = (),
        pass_fds: tuple[int, ...] = (),
    ) -> None:
        self.definition, self.root, self.env = definition, root, env
        self.argv_prefix, self.pass_fds = argv_prefix, pass_fds
        self.state: State = "not_started"
        self.last_error: str | None = None
        self.process: ServerProcess | None = None
        self.capabilities = types.ServerCapabilities()
        self.encoding: str = types.PositionEncodingKind.Utf16
        self.documents: dict[str, Document] = {}
        self.diagnostics: dict[str, tuple[int | None, list[types.Diagnostic]]] = {}
        self._push_times: dict[str, float] = {}
        self._published = asyncio.Event()
        self._progress: set[str | int] = set()
        self._progress_done = asyncio.Event()
        self._starting: asyncio.Task[None] | None = None
        self.restarts = 0
        self.used = time.monotonic()
        self.busy = 0

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    async def ready(self) -> None:
        """Start the server if it is not running (shared by concurrent callers); ServerLost
        with the reason when it cannot be started."""
        self.used = time.monotonic()
        if self.state in ("ready", "indexing") and self.process and not self.process.exit_reason:
            return
        if self.state == "crashed" and self.restarts >= MAX_RESTARTS:
            raise ServerLost(f"{self.name} is not available: {self.last_error}")
        if self._starting is None or self._starting.done():
            self._starting = asyncio.create_task(self._start())
        await asyncio.shield(self._starting)
        self.used = time.monotonic()
        if self.state == "crashed":
            raise ServerLost(f"{self.name} could not start: {self.last_error}")

    async def _start(self) -> None:
        if self.state == "crashed":
            await asyncio.sleep(BACKOFF_SECONDS[min(self.restarts, len(BACKOFF_SECONDS)) - 1])
        self.state, self.documents, self.diagnostics = "starting", {}, {}
        self._progress.clear()
        process = self.process = ServerProcess(self.name, self._exited)
        self._register(process)
        deadline = time.monotonic() + self.definition.startup_timeout
        try:
            argv = [*self.argv_prefix, *self.definition.argv]
            await process.start(argv, self.env, self.root, self.pass_fds)
            result = await process.request(
                types.INITIALIZE,
                self._initialize_params(),
                self.definition.startup_timeout,
                raw=True,
            )
        except (OSError, RequestFailed, ServerLost) as exc:
            self._crashed(_start_error(exc, self.definition))
            await process.stop()
            return
        self.capabilities = capabilities_of(process, result)
        self.encoding = self.capabilities.position_encoding or types.PositionEncodingKind.Utf16
        process.notify(types.INITIALIZED, types.InitializedParams())
        self.state = "indexing"
        await self._await_indexing(deadline)
        if self.state == "indexing":
            self.state = "ready"

    async def _await_indexing(self, deadline: float) -> None:
        """Until the indexing the server reports with ``$/progress`` ends, and the server has
        been quiet for :data:`QUIET_SECONDS` (a server that scans its workspace without
        reporting progress logs while it does), at most until ``deadline``."""
        assert self.process is not None
        while time.monotonic() < deadline:
            quiet = time.monotonic() - self.process.last_message
            if not self._progress and quiet >= QUIET_SECONDS:
                return
            self._progress_done.clear()
            wait = QUIET_SECONDS - quiet if not self._progress else deadline - time.monotonic()
            try:
                await asyncio.wait_for(self._progress_done.wait(), max(wait, 0.01))
            except TimeoutError:
                continue

    def _initialize_params(self) -> types.InitializeParams:
        uri = self.root.as_uri()
        return types.InitializeParams(
            process_id=None,  # the server must not exit on our pid (it may not see it, sandboxed)
            root_uri=uri,
            root_path=str(self.root),
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=self.root.name or "/")],
            capabilities=client_capabilities(),
            initialization_options=self.definition.initialization_options,
            client_info=types.ClientInfo(name="agentd"),
        )

    def _register(self, process: ServerProcess) -> None:
        """The server's notifications and requests agentd answers (pygls calls each handler
        with the params only)."""
        handlers: dict[str, Any] = {
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: self._on_diagnostics,
            types.PROGRESS: self._on_progress,
            types.WORKSPACE_CONFIGURATION: self._on_configuration,
            types.WORKSPACE_WORKSPACE_FOLDERS: self._on_folders,
        }
        for ignored in (
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
            types.CLIENT_REGISTER_CAPABILITY,
            types.CLIENT_UNREGISTER_CAPABILITY,
            types.WINDOW_LOG_MESSAGE,
            types.WINDOW_SHOW_MESSAGE,
            types.TELEMETRY_EVENT,
        ):
            handlers[ignored] = _nothing
        for method, handler in handlers.items():  # pygls marks each handler: a function each
            process.client.feature(method)(_handler(handler))

    def _on_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        self.diagnostics[params.uri] = (params.version, list(params.diagnostics))
        self._push_times[params.uri] = time.monotonic()
        self._published.set()  # wakes the waiters, who take a fresh event
        self._published = asyncio.Event()

    def _on_progress(self, params: types.ProgressParams) -> None:
        kind = params.value.get("kind") if isinstance(params.value, dict) else None
        if kind == "begin":
            self._progress.add(params.token)
        elif kind == "end":
            self._progress.discard(params.token)
            if not self._progress:
                self._progress_done.set()

    def _on_configuration(self, params: types.ConfigurationParams) -> list[Any]:
        return [_section(self.definition.settings, item.section) for item in params.items]

    def _on_folders(self, params: Any) -> list[types.WorkspaceFolder]:
        return [types.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)]

    def _exited(self, reason: str) -> None:
        if self.state not in ("stopped", "crashed"):
            log.warning(
                "language server lost", server=self.name, root=str(self.root), reason=reason
            )
            self._crashed(reason)

    def _crashed(self, reason: str) -> None:
        self.state, self.last_error = "crashed", reason
        self.restarts += 1
        self.documents = {}

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        """``method`` on the running server (see :meth:`ready`); a server with a request
        under way is never idle."""
        await self.ready()
        assert self.process is not None
        self.busy += 1
        try:
            return await self.process.request(method, params, timeout)
        finally:
            self.busy -= 1
            self.used = time.monotonic()

    async def sync(self, path: Path, text: str) -> Document:
        """``path`` open with ``text`` (didOpen, or didChange + didSave when it changed)."""
        await self.ready()
        assert self.process is not None
        self._close_idle()
        uri = path.as_uri()
        document = self.documents.get(uri)
        if document is None:
            document = self.documents[uri] = Document(text)
            item = types.TextDocumentItem(
                uri=uri, language_id=language_id(path), version=document.version, text=text
            )
            self.process.notify(
                types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item)
            )
        elif document.text != text:
            document.text, document.version = text, document.version + 1
            ident = types.VersionedTextDocumentIdentifier(uri=uri, version=document.version)
            change = types.TextDocumentContentChangeWholeDocument(text=text)
            self.process.notify(
                types.TEXT_DOCUMENT_DID_CHANGE,
                types.DidChangeTextDocumentParams(text_document=ident, content_changes=[change]),
            )
            self.process.notify(
                types.TEXT_DOCUMENT_DID_SAVE,
                types.DidSaveTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=uri)
                ),
            )
        document.used = time.monotonic()
        return document

    def _close_idle(self) -> None:
        now = time.monotonic()
        for uri, document in list(self.documents.items()):
            if now - document.used > DOCUMENT_IDLE_SECONDS and self.process is not None:
                del self.documents[uri]
                self.diagnostics.pop(uri, None)
                ident = types.TextDocumentIdentifier(uri=uri)
                self.process.notify(
                    types.TEXT_DOCUMENT_DID_CLOSE,
                    types.DidCloseTextDocumentParams(text_document=ident),
                )

    async def diagnostics_of(
        self, path: Path, document: Document, since: float, wait: float
    ) -> list[types.Diagnostic] | None:
        """The problems of ``document`` at its version: pulled when the server offers it, else
        the first push for that version (or, without versions, the last push after ``since``
        once pushes settle), waiting at most ``wait`` seconds; None when none came in time."""
        uri = path.as_uri()
        if self.capabilities.diagnostic_provider is not None:
            ident = types.TextDocumentIdentifier(uri=uri)
            try:
                report = await self.request(
                    types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DocumentDiagnosticParams(text_document=ident),
                    max(wait, 0.1),
                )
            except RequestFailed:
                return None
            return list(getattr(report, "items", None) or [])
        return await self._pushed(uri, document.version, since, wait)

    async def _pushed(
        self, uri: str, version: int, since: float, wait: float
    ) -> list[types.Diagnostic] | None:
        deadline = time.monotonic() + wait
        while True:
            found = self.diagnostics.get(uri)
            if found is not None and self._fresh(uri, found[0], version, since):
                if found[0] is not None:
                    return found[1]
                took = time.monotonic() - since  # a slow (loaded) server: a longer quiet
                quiet = max(UNVERSIONED_SETTLE, min(took, MAX_SETTLE))
                return await self._settled(uri, deadline, quiet)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                await asyncio.wait_for(self._published.wait(), left)
            except TimeoutError:
                return None

    async def _settled(self, uri: str, deadline: float, quiet: float) -> list[types.Diagnostic]:
        """An unversioned push may be stale (computed before the edit) or partial (syntax
        first, types later): the last push once none came for ``quiet`` seconds (at least
        ``UNVERSIONED_SETTLE``; as long as the first push took, up to ``MAX_SETTLE``, since
        a server that is slow to answer is slow to send its second list too)."""
        while (left := deadline - time.monotonic()) > 0:
            try:
                await asyncio.wait_for(self._published.wait(), min(left, quiet))
            except TimeoutError:
                break
        return self.diagnostics.get(uri, (None, []))[1]

    def _fresh(self, uri: str, seen: int | None, version: int, since: float) -> bool:
        if seen is not None:
            return seen >= version
        return self._push_times.get(uri, 0.0) >= since

    async def stop(self) -> None:
        self.state = "stopped"
        if self.process is not None:
            await self.process.stop()


def _nothing(params: Any) -> None:
    return None


def _handler(call: Any) -> Any:
    def handle(params: Any) -> Any:
        return call(params)

    return handle


def capabilities_of(process: ServerProcess, result: Any) -> types.ServerCapabilities:
    """The server's capabilities from ``initialize``'s raw result; a part lsprotocol cannot
    read (some servers' notebook filters) is left out rather than failing the start."""
    raw = result.get("capabilities") if isinstance(result, dict) else None
    if not isinstance(raw, dict):
        return types.ServerCapabilities()
    converter = process.client.protocol._converter
    kept = dict(raw)
    while True:
        try:
            return converter.structure(kept, types.ServerCapabilities)
        except Exception:
            bad = next((key for key in kept if not _readable(converter, key, kept[key])), None)
            if bad is None:
                return types.ServerCapabilities()
            del kept[bad]


def _readable(converter: Any, key: str, value: Any) -> bool:
    try:
        converter.structure({key: value}, types.ServerCapabilities)
    except Exception:
        return False
    return True


def _section(settings: Any, section: str | None) -> Any:
    """The part of ``settings`` a ``workspace/configuration`` item asks for (None: none)."""
    value = settings
    for part in (section or "").split(".") if section else ():
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _start_error(exc: Exception, definition: ServerDef) -> str:
    if isinstance(exc, OSError):
        return f"{definition.command} cannot be started: {exc.strerror or exc}"
    if isinstance(exc, RequestFailed) and "no answer" in str(exc):
        return f"it did not answer initialize within {definition.startup_timeout:g} s"
    return str(exc)
