"""What a hook command reads on its stdin and may print on its stdout.

A hook (``[[hooks.<event>]]`` in the configuration) gets one :class:`HookInput` as a JSON
object on stdin (camelCase, absent fields omitted). When it exits 0 its stdout may be one
:class:`HookOutput` JSON object; any other stdout is ignored.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agentd.protocol.base import Wire
from agentd.protocol.events import HookEventName, RunStopReason


class HookInput(Wire):
    """The JSON object on a hook's stdin. ``tool``, ``tool_call_id`` and ``args``: the call of
    a ``pre_tool``/``post_tool`` hook; ``result`` (its text) and ``is_error``: what it
    returned (``post_tool``); ``prompt``: the user's text (``user_prompt``);
    ``stop_reason``: how the run ended (``stop``)."""

    event: HookEventName
    session_id: str = ""
    cwd: str = ""
    tool: str | None = None
    tool_call_id: str | None = None
    args: dict[str, Any] | None = None
    result: str | None = None
    is_error: bool | None = None
    prompt: str | None = None
    stop_reason: RunStopReason | None = None


class HookOutput(msgspec.Struct, rename="camel"):
    """What a hook that exits 0 may print: ``{"decision": "block", "reason": "…"}`` refuses
    the prompt or the tool call; ``{"additionalContext": "…"}`` adds text to the model's
    context (``user_prompt``, ``session_start``) or to the tool's result (``post_tool``)."""

    decision: Literal["block", "allow"] | None = None
    reason: str | None = None
    additional_context: str | None = None
