"""The loop's view of hooks: the points of a run where the user's commands may look, add
context or block (:class:`RunHooks`), and what they answer (:class:`HookVerdict`).

The loop asks at fixed seams: ``user_prompt`` (and ``session_start``, the first time) before
the prompt joins the conversation, ``pre_tool`` before a call is authorized, ``post_tool``
after it ran, ``stop`` before ``agent_end``. The implementation (:mod:`agentd.hooks`) runs
the configured commands and reports each through the event sink; the loop only applies the
verdict. :data:`NO_HOOKS` answers at once and reports nothing (no hooks configured).
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from agentd.protocol.content import TextContent, ToolCall, UserMessage
from agentd.protocol.events import HookEventName
from agentd.protocol.hooks import HookInput
from agentd.tools.base import ToolResult


class HookVerdict(msgspec.Struct, frozen=True):
    """What the hooks of one event answered: ``blocked`` is the reason the model or user
    reads (None: go on); ``context`` the text they added (None: nothing)."""

    blocked: str | None = None
    context: str | None = None


GO_ON = HookVerdict()


class RunHooks(Protocol):
    """Runs the hooks configured for an event (see the module docstring)."""

    def wants(self, event: HookEventName, tool: str | None = None) -> bool:
        """Whether any hook would run for ``event`` (of a call to ``tool``): lets the loop
        skip building what the hooks would read."""
        ...

    async def fire(self, event: HookInput) -> HookVerdict:
        """Run the matching hooks in order (the first block ends the series); never raises
        for a hook's failure (that is a warning, and the run goes on)."""
        ...


class _NoHooks:
    def wants(self, event: HookEventName, tool: str | None = None) -> bool:
        return False

    async def fire(self, event: HookInput) -> HookVerdict:
        return GO_ON


NO_HOOKS: RunHooks = _NoHooks()


async def prompt_hooks(hooks: RunHooks, text: str) -> HookVerdict:
    """Run the ``session_start`` hooks (wanted on a session's first run only) and the
    ``user_prompt`` hooks of ``text``: the first block, or the context they added."""
    added: list[str] = []
    for event in (HookInput(event="session_start"), HookInput(event="user_prompt", prompt=text)):
        if hooks.wants(event.event):
            verdict = await hooks.fire(event)
            if verdict.blocked is not None:
                return verdict
            added += [verdict.context] if verdict.context else []
    return HookVerdict(context="\n\n".join(added) or None)


def blocked_call_text(reason: str) -> str:
    """The result the model reads for a call a ``pre_tool`` hook blocked."""
    return f"Blocked by a hook (the user's policy): {reason}"


async def pre_tool(hooks: RunHooks, call: ToolCall) -> str | None:
    """Run the ``pre_tool`` hooks of ``call``: the text of its failed result when one blocks
    it, else None."""
    if not hooks.wants("pre_tool", call.name):
        return None
    event = HookInput(event="pre_tool", tool=call.name, tool_call_id=call.id, args=call.arguments)
    verdict = await hooks.fire(event)
    return None if verdict.blocked is None else blocked_call_text(verdict.blocked)


async def post_tool(hooks: RunHooks, call: ToolCall, result: ToolResult) -> ToolResult:
    """Run the ``post_tool`` hooks of ``call``: its result with their context appended (a
    block appends its reason and marks the result an error), or ``result`` unchanged."""
    if not hooks.wants("post_tool", call.name):
        return result
    event = HookInput(
        event="post_tool",
        tool=call.name,
        tool_call_id=call.id,
        args=call.arguments,
        result=result_text(result),
        is_error=result.is_error,
    )
    verdict = await hooks.fire(event)
    added = [text for text in (verdict.context, verdict.blocked) if text]
    if verdict.blocked is not None:
        added[-1] = blocked_call_text(verdict.blocked)
    if not added:
        return result
    return _appended(result, "\n\n".join(added), error=verdict.blocked is not None)


def result_text(result: ToolResult) -> str:
    """The text of a tool result (its text blocks joined; images left out)."""
    if isinstance(result.output, str):
        return result.output
    return "\n".join(part.text for part in result.output if isinstance(part, TextContent))


def _appended(result: ToolResult, text: str, *, error: bool) -> ToolResult:
    output = result.output
    if isinstance(output, str):
        output = f"{output}\n\n{text}" if output else text
    else:
        output = [*output, TextContent(text=text)]
    return msgspec.structs.replace(result, output=output, is_error=result.is_error or error)


def with_context(message: UserMessage, context: str | None) -> UserMessage:
    """The prompt with the hooks' context as one more text block (the model reads it with
    the prompt, and the session records it)."""
    if not context:
        return message
    block = TextContent(text=f"<hook_context>\n{context}\n</hook_context>")
    return msgspec.structs.replace(message, content=[*message.content, block])
