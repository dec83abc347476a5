"""``agentd lsp`` answers ``initialize`` with its capabilities and offers code actions that
cost nothing until run: a quickfix per diagnostic, refactor actions for a selection, the
command filled by ``codeAction/resolve`` (or at once for an editor that does not resolve)."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from tests.lsp.conftest import Box, Editor, spawn

DRAFT = "def greet(name):\n    pritn('hello', name)\n    return name\n"


def _range(sl: int, sc: int, el: int, ec: int) -> types.Range:
    return types.Range(
        start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)
    )


async def _actions(editor: Editor, uri: str, where: types.Range, diags: list[Any]) -> list[Any]:
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=where,
        context=types.CodeActionContext(diagnostics=diags),
    )
    return list(await editor.client.text_document_code_action_async(params) or [])


async def test_initialize_names_agentd_and_its_capabilities(box: Box) -> None:
    async with spawn(box, Editor()) as result:
        assert result.server_info is not None
        assert result.server_info.name == "agentd"
        caps = result.capabilities
        assert caps.execute_command_provider is not None
        assert list(caps.execute_command_provider.commands) == [
            "agentd.prompt",
            "agentd.cancel",
            "agentd.newSession",
            "agentd.steer",
        ]
        actions = caps.code_action_provider
        assert isinstance(actions, types.CodeActionOptions)
        assert actions.resolve_provider is True
        assert set(actions.code_action_kinds or []) == {"quickfix", "refactor"}
        sync = caps.text_document_sync
        assert isinstance(sync, types.TextDocumentSyncOptions)
        assert sync.open_close is True
        assert sync.change == types.TextDocumentSyncKind.Incremental


async def test_a_diagnostic_gets_a_quickfix_resolved_into_agentd_prompt(box: Box) -> None:
    editor = Editor()
    async with spawn(box, editor):
        uri = editor.open(box.project / "draft.py", DRAFT)
        diagnostic = types.Diagnostic(
            range=_range(1, 4, 1, 9), message="undefined name 'pritn'", source="pyflakes"
        )
        actions = await _actions(editor, uri, _range(1, 4, 1, 9), [diagnostic])
        fixes = [a for a in actions if a.kind == "quickfix"]
        assert [a.title for a in fixes] == ["Fix with agentd: undefined name 'pritn'"]
        assert fixes[0].command is None  # filled by resolve: nothing computed for the menu
        resolved = await editor.client.code_action_resolve_async(fixes[0])
        assert resolved.command is not None
        assert resolved.command.command == "agentd.prompt"
        argument = resolved.command.arguments[0]
        assert argument["uri"] == uri
        assert "undefined name 'pritn'" in argument["prompt"]
        assert "pyflakes" in argument["prompt"]
        assert "pritn('hello', name)" in argument["prompt"]  # the code, from the buffer
        assert str(box.project / "draft.py") in argument["prompt"]
        # an empty range without diagnostics offers nothing
        assert await _actions(editor, uri, _range(0, 0, 0, 0), []) == []


async def test_a_selection_gets_refactor_actions_with_their_commands(box: Box) -> None:
    editor = Editor(lazy_code_actions=False)
    async with spawn(box, editor):
        uri = editor.open(box.project / "draft.py", DRAFT)
        actions = await _actions(editor, uri, _range(0, 0, 2, 0), [])
        assert [a.title for a in actions] == [
            "Ask agentd to explain this",
            "Ask agentd to refactor this",
            "Ask agentd to write tests for this",
        ]
        assert all(a.kind.startswith("refactor") for a in actions)
        for action in actions:  # an editor that does not resolve gets the command at once
            assert isinstance(action, types.CodeAction)
            assert action.command is not None
            assert action.command.command == "agentd.prompt"
            prompt = action.command.arguments[0]["prompt"]
            assert "def greet(name):\n    pritn('hello', name)" in prompt
        only = types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=_range(0, 0, 2, 0),
            context=only,
        )
        assert not await editor.client.text_document_code_action_async(params)
