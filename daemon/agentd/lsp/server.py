"""The pygls language server of ``agentd lsp``: capabilities and handlers.

Capabilities: ``executeCommandProvider`` (:data:`agentd.protocol.lsp.COMMANDS`),
``codeActionProvider`` (quickfix and refactor kinds, ``resolveProvider``), incremental text
document sync (pygls keeps the open documents: the agent reads unsaved buffers), server info
``agentd``.

``workspace/executeCommand`` is handled by :class:`AgentdProtocol` itself (a coroutine per
request), so that the handler sees the request's ``workDoneToken`` and a ``$/cancelRequest``
cancels the running command. Errors are LSP errors without tracebacks: an unknown command or
malformed arguments are -32602, agentd's own errors keep their codes, anything else is -32603
with the details in the log only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from cattrs import ClassValidationError, transform_error
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method

from agentd import __version__
from agentd.errors import RpcError
from agentd.frontend import FrontEndOptions
from agentd.log import get_logger
from agentd.lsp import actions
from agentd.lsp.editor import Editor
from agentd.lsp.front import Front, _path_of
from agentd.protocol.lsp import COMMANDS, PromptArgs, SessionArgs, SteerArgs

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from cattrs import Converter

log = get_logger("agentd.lsp")

ARGUMENTS: dict[str, type[msgspec.Struct]] = {
    "agentd.prompt": PromptArgs,
    "agentd.cancel": SessionArgs,
    "agentd.newSession": SessionArgs,
    "agentd.steer": SteerArgs,
}
"""Each command's one argument."""


class AgentdServer(LanguageServer):
    """pygls' server with the agentd front-end attached (:attr:`front`)."""

    front: Front

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Logged, not shown: a request's error was answered to the editor already; others
        (a malformed message) are warnings."""
        if getattr(source, "__name__", "") == "FeatureRequestError":
            log.info("LSP request failed", error=str(error))
        else:
            log.warning("LSP message not handled", error=str(error))


UNREADABLE = "agentd/unreadableRequest"
"""Where a request pygls cannot read goes, to be answered -32602 (see ``structure_message``)."""


class AgentdProtocol(LanguageServerProtocol):
    """pygls' LSP protocol with agentd's ``workspace/executeCommand``, and an answer for
    every request: one whose params do not fit its method (or that has none) is answered
    -32602, where stock pygls answers nothing and the editor waits forever."""

    _server: AgentdServer

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" not in data or "method" not in data or "error" in data:
                raise
            method = str(data["method"])
            request = {"jsonrpc": "2.0", "id": data["id"], "method": UNREADABLE}
            request["params"] = {"method": method, "reason": _why(exc)}
            return super().structure_message(request)

    @lsp_method(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def lsp_work_done_progress_cancel(self, params: types.WorkDoneProgressCancelParams) -> None:
        """The editor's cancel button on a prompt's progress: the run is cancelled."""
        self._server.front.cancel_progress(params.token)

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(  # type: ignore[override]  # a coroutine: cancellable
        self, params: types.ExecuteCommandParams
    ) -> Any:
        """Run one of :data:`COMMANDS` with its argument (see the module docstring)."""
        front = self._server.front
        handlers: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "agentd.prompt": lambda args: front.prompt(args, params.work_done_token),
            "agentd.cancel": front.cancel,
            "agentd.newSession": front.new_session,
            "agentd.steer": front.steer,
        }
        if params.command not in handlers:
            raise JsonRpcInvalidParams(f"unknown command {params.command!r}")
        args = _argument(params.command, params.arguments)
        try:
            answer = await handlers[params.command](args)
        except RpcError as exc:
            raise JsonRpcException(message=exc.message, code=exc.code) from None
        except JsonRpcException:
            raise
        except Exception as exc:
            log.exception("command failed", command=params.command)
            raise JsonRpcInternalError(f"{params.command} failed: {exc}") from None
        return msgspec.to_builtins(answer)


def _why(exc: Exception) -> str:
    """What was wrong with a message's params, in a line (cattrs' paths when it says)."""

    cause = exc.__cause__
    if isinstance(cause, ClassValidationError):
        return "; ".join(transform_error(cause, path="message"))[:500]
    return str(cause or exc).splitlines()[0] if str(cause or exc) else "malformed"


def _argument(command: str, arguments: Any) -> Any:
    """The command's one argument, decoded; -32602 when missing or malformed."""
    if not isinstance(arguments, list | tuple) or len(arguments) != 1:
        raise JsonRpcInvalidParams(f"{command} takes one argument (an object)")
    try:
        return msgspec.convert(arguments[0], ARGUMENTS[command])
    except msgspec.ValidationError as exc:
        raise JsonRpcInvalidParams(f"{command}: {exc}") from None


def build_server(options: FrontEndOptions) -> AgentdServer:
    """The language server, its handlers registered (see the module docstring)."""
    converters: list[Converter] = []

    def converter_factory() -> Converter:
        converters.append(default_converter())  # type: ignore[no-untyped-call]
        return converters[-1]

    server = AgentdServer(
        "agentd",
        __version__,
        text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        protocol_cls=AgentdProtocol,
        converter_factory=converter_factory,
    )
    editor = Editor(server, converters[0])
    server.front = Front(options, editor)
    for command in COMMANDS:  # listed in executeCommandProvider; AgentdProtocol runs them
        server.command(command)(_listed)
    _register_code_actions(server, editor, converters[0])

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def closed(params: types.DidCloseTextDocumentParams) -> None:
        editor.forget(params.text_document.uri)

    @server.feature(UNREADABLE)
    def unreadable(params: Any) -> None:
        raise JsonRpcInvalidParams(f"invalid params for {params.method}: {params.reason}")

    @server.feature(types.SHUTDOWN)
    async def shutdown(params: Any) -> None:
        await server.front.close()

    return server


def _listed(*args: Any) -> None:
    """Never called: the commands are run by :class:`AgentdProtocol`."""


def _register_code_actions(server: AgentdServer, editor: Editor, converter: Converter) -> None:
    kinds = [types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor]
    options = types.CodeActionOptions(code_action_kinds=kinds, resolve_provider=True)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, options)
    def code_action(params: types.CodeActionParams) -> list[dict[str, Any]]:
        uri = params.text_document.uri
        path = _path_of(uri) or uri
        context = params.context
        only = (
            [str(getattr(kind, "value", kind)) for kind in context.only] if context.only else None
        )
        try:
            return actions.code_actions(
                uri,
                path,
                editor.text_of(path) if _path_of(uri) else None,
                converter.unstructure(params.range),
                [converter.unstructure(d) for d in context.diagnostics],
                only=only,
                lazy=_resolves_commands(editor),
                encoding=editor.position_encoding(),
            )
        except Exception:
            log.exception("code actions failed", uri=uri)
            raise JsonRpcInternalError("code actions failed (see the agentd lsp log)") from None

    @server.feature(types.CODE_ACTION_RESOLVE)
    def resolve(action: types.CodeAction) -> dict[str, Any]:
        return actions.resolve(converter.unstructure(action))


def _resolves_commands(editor: Editor) -> bool:
    """Whether the editor resolves a code action's ``command`` lazily."""
    document = editor.capabilities.text_document
    code_action = document.code_action if document else None
    support = code_action.resolve_support if code_action else None
    return bool(support and "command" in support.properties)
