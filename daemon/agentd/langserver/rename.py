"""A rename: the server's ``WorkspaceEdit`` turned into the agent's own file changes.

:func:`plan` reads every file the edit touches (the editor's buffer when an editor serves
files, else the disk beneath the workspace), refuses a path outside the workspace of a
sandboxed session, a control file, and file creation/rename/deletion, and applies the text
edits (positions in the server's encoding). :class:`ShownPlans` keeps what the approval
preview showed of a call's rename, so that a rename whose changes differ by the time it is
approved is refused rather than writing what the user did not see. :func:`apply` writes
each file the way ``edit`` does (through the editor, else an atomic write), records the undo
step (``undo_edit``) and the change (``session/rewind``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from collections import OrderedDict
from pathlib import Path

from lsprotocol import types

from agentd.langserver.positions import from_units, lines_of
from agentd.langserver.render import uri_path
from agentd.protocol.lsp_details import LspFileChange
from agentd.tools.base import ToolContext, ToolError
from agentd.tools.files.diffs import summarize_change
from agentd.tools.files.fileio import atomic_write, encode_text, record_stamp
from agentd.tools.files.history import history_for
from agentd.tools.files.locks import changing
from agentd.tools.files.paths import display_path, resolve_path
from agentd.tools.files.protected import refuse_control
from agentd.tools.files.safeopen import read_bytes

MAX_FILES = 500
MAX_SHOWN = 64
"""Previews of renames still waiting for their approval that a session remembers."""
Planned = list[tuple[Path, str, str]]


def fingerprint(planned: Planned) -> dict[str, str]:
    """Each planned file's digest of its text before and after the rename."""
    found = {}
    for path, before, after in planned:
        digest = hashlib.sha256()
        for text in (before, after):
            data = encode_text(text)
            digest.update(len(data).to_bytes(8, "big") + data)
        found[str(path)] = digest.hexdigest()
    return found


class ShownPlans:
    """What the approval previews showed, by tool call id (the most recent
    :data:`MAX_SHOWN`): :meth:`check` refuses a call whose plan has changed since."""

    def __init__(self) -> None:
        self._shown: OrderedDict[str, dict[str, str]] = OrderedDict()

    def remember(self, call_id: str, planned: Planned) -> None:
        if not call_id:
            return
        self._shown[call_id] = fingerprint(planned)
        self._shown.move_to_end(call_id)
        while len(self._shown) > MAX_SHOWN:
            self._shown.popitem(last=False)

    def check(self, call_id: str, planned: Planned, ctx: ToolContext) -> None:
        """ToolError when the call ``call_id`` was previewed and ``planned`` now changes other
        files, or the same files differently (a file edited meanwhile, a server that answers
        otherwise); a call that was not previewed (no approval asked) passes."""
        shown = self._shown.pop(call_id, None) if call_id else None
        if shown is None:
            return
        now = fingerprint(planned)
        differ = sorted(p for p in shown.keys() | now.keys() if shown.get(p) != now.get(p))
        if differ:
            names = ", ".join(display_path(Path(p), ctx) for p in differ)
            raise ToolError(
                f"The rename now changes {names} differently from the approved preview; "
                "nothing was written. Call it again to see and approve the current changes."
            )


def edits_by_uri(edit: types.WorkspaceEdit | None) -> dict[str, list[types.TextEdit]]:
    """The text edits of ``edit`` per document; ToolError for file operations."""
    found: dict[str, list[types.TextEdit]] = {}
    for uri, edits in (edit.changes or {}).items() if edit else ():
        found.setdefault(uri, []).extend(edits)
    for change in (edit.document_changes or ()) if edit else ():
        if not isinstance(change, types.TextDocumentEdit):
            raise ToolError("The server's rename creates, renames or deletes files; not applied.")
        found.setdefault(change.text_document.uri, []).extend(
            e for e in change.edits if isinstance(e, types.TextEdit)
        )
    if len(found) > MAX_FILES:
        raise ToolError(f"The rename would change {len(found)} files (at most {MAX_FILES}).")
    return found


async def read_text(path: Path, ctx: ToolContext) -> str:
    """The text of ``path`` as the agent sees it: the editor's buffer, else the disk."""
    if ctx.files is not None:
        text = await ctx.files.read_text(path)
        if text is not None:
            return text
    data = await asyncio.to_thread(read_bytes, path, ctx.workspace)
    return data.decode("utf-8", "surrogateescape")


async def plan(edit: types.WorkspaceEdit | None, encoding: str, ctx: ToolContext) -> Planned:
    """(path, before, after) of each file the edit changes (see the module docstring)."""
    planned: Planned = []
    for uri, edits in edits_by_uri(edit).items():
        where = uri_path(uri)
        if where is None:
            raise ToolError(f"The rename names {uri}, which is not a file.")
        path = resolve_path(str(where), ctx)  # a sandboxed session: inside the workspace only
        refuse_control(path, ctx.workspace, display_path(path, ctx))
        before = await read_text(path, ctx)
        after = apply_text_edits(before, edits, encoding)
        if after != before:
            planned.append((path, before, after))
    return planned


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """``text`` with ``edits`` applied (the LSP rule: ranges refer to the original text)."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    lines = lines_of(text)

    def index(pos: types.Position) -> int:
        if pos.line >= len(starts):
            return len(text)
        return starts[pos.line] + from_units(lines[pos.line], pos.character, encoding)

    spans = sorted(
        ((index(e.range.start), index(e.range.end), e.new_text) for e in edits),
        key=lambda span: span[0],
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


async def apply(planned: Planned, ctx: ToolContext) -> list[LspFileChange]:
    """Write every planned file as ``edit`` would, each one's undo step and change recorded;
    the changes with their diffs."""
    changes = []
    async with contextlib.AsyncExitStack() as stack:
        for path, _, _ in planned:
            await stack.enter_async_context(changing(ctx, str(path)))
        for path, before, after in planned:
            await _write(path, after, ctx)
            old, new = encode_text(before), encode_text(after)
            history_for(ctx).push(path, old)
            if ctx.changes is not None:
                await ctx.changes.changed(path, old, new)
            record_stamp(ctx, path)
            shown = display_path(path, ctx)
            summary = summarize_change(before, after, shown)
            changes.append(LspFileChange(path=shown, edits=summary.added, diff=summary.diff))
    return changes


async def _write(path: Path, text: str, ctx: ToolContext) -> None:
    if ctx.files is not None and await ctx.files.write_text(path, text):
        return
    await asyncio.to_thread(atomic_write, path, encode_text(text), ctx.workspace)
