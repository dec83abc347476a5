"""What an approval request shows before the click: :class:`ApprovalPreview`.

The daemon computes it from the tool call's arguments when it asks for approval, so every
client shows the same thing: the change an ``edit``/``write`` would make as a unified diff
against the file as it is now (a new file: its first lines), the full command and the
directory a ``bash`` call would run in, the URL of a ``web_fetch``, the server, tool and
arguments of an MCP tool. ``always_rule`` on the request names the rule an *always* answer
adds.
"""

from __future__ import annotations

from typing import Any, Literal

from agentd.protocol.base import Wire

PreviewKind = Literal["diff", "command", "url", "mcp"]


class ApprovalPreview(Wire):
    """The change or action a tool call asks approval for (fields by ``kind``).

    ``diff``: ``path`` (relative to the session's cwd when inside it), ``diff`` (unified,
    ``--- a/PATH``/``+++ b/PATH``; for a created file ``--- /dev/null`` and only its first
    lines), ``created``, ``added``/``removed`` line counts of the whole change, ``truncated``
    when the diff shown was cut. ``error`` says why the call would fail as asked (an edit whose
    ``old_string`` is not in the file, a directory given as the file); then ``diff`` is None.
    ``old_text``/``new_text`` are the whole file before and after (a created file: no
    ``old_text``); they ride only on ``session/requestPermission`` and only for files up to
    256 KiB (ACP editors show the whole-file diff from them), never in the event stream.

    ``command``: ``command`` and ``cwd``. ``url``: ``url``. ``mcp``: ``server``, ``tool``,
    ``arguments``.
    """

    kind: PreviewKind
    path: str | None = None
    diff: str | None = None
    created: bool = False
    added: int | None = None
    removed: int | None = None
    truncated: bool = False
    error: str | None = None
    old_text: str | None = None
    new_text: str | None = None
    command: str | None = None
    cwd: str | None = None
    url: str | None = None
    server: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] | None = None
