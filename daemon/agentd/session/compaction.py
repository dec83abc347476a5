"""Context compaction: what to cut, what to ask the model, its summary (pure functions), and
:class:`Compactor`, which applies them to one session.

The messages before a cut point are summarised by the session's own model; the session file
gets a ``compaction`` entry (summary, first kept entry id, tokens before) and the new context
is *summary + the kept recent messages*. The compactor returns that context and never touches
the agent: inside a run the agent's loop adopts it (its ``transform_context``), between runs
the runtime does (``session/compact``). The cut keeps about ``keep_tokens`` of recent context
and never separates a tool result from the call it answers.

Triggers: ``session/compact`` (manual); before an LLM call when the estimated context passes the
model's window minus a reserve (threshold); once on a context-overflow error, after which the turn
is retried (overflow).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import msgspec

from agentd.agent.messages import estimate_tokens
from agentd.errors import InvalidParams, StoreWriteFailed
from agentd.protocol.content import (
    AssistantMessage,
    Message,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from agentd.protocol.events import CompactionEnd, CompactionStart, Event
from agentd.protocol.hooks import HookInput
from agentd.protocol.methods import CompactResult
from agentd.providers.base import Provider, ProviderRequest, StreamEnd

if TYPE_CHECKING:
    from agentd.agent.ports import CompactReason
    from agentd.agent.run import ModelBinding
    from agentd.hooks.session import SessionHooks
    from agentd.session.phase import RunState
    from agentd.session.sink import SessionSink
    from agentd.store import SessionFile
    from agentd.toolspec import ToolSpec

Reason = Literal["manual", "threshold", "overflow"]

SUMMARY_PROMPT = (
    "You write handover summaries of coding sessions. Summarise the conversation you are given "
    "so that another engineer can continue the work without it: the user's goals and "
    "constraints, decisions made, files read and changed (with paths), commands run and their "
    "outcomes, errors met, and what remains to do. Be factual and compact; use bullet points."
)
SUMMARY_PREFIX = "Summary of the earlier conversation (older messages were compacted):\n\n"


def context_tokens(messages: list[Message]) -> int:
    """Tokens the next call will send: the last reply's reported input + output tokens (which
    include the system prompt and tools) plus an estimate for what came after it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage) and message.usage.input_tokens:
            used = message.usage.input_tokens + message.usage.output_tokens
            return used + estimate_tokens(messages[index + 1 :])
    return estimate_tokens(messages)


class PromptTooLarge(InvalidParams):
    """A prompt that cannot fit the model's context window, whatever compaction does."""


def prompt_too_large(
    system_prompt: str,
    tool_specs: list[ToolSpec],
    model: str,
    text: str,
    settings: CompactionSettings,
) -> PromptTooLarge | None:
    """The error for a prompt that cannot fit the context window whatever compaction does: the
    system prompt, the tool specs, ``text`` and room for a reply (the reserve, at most a quarter
    of the window) exceed it. None when it fits or the window is unknown."""
    window = settings.context_window
    if not window:
        return None
    fixed = (len(system_prompt) + len(msgspec.json.encode(tool_specs))) // 4
    prompt = len(text.encode()) // 4
    reply = min(settings.reserve_tokens, window // 4)
    if fixed + prompt + reply <= window:
        return None
    return PromptTooLarge(
        f"the prompt is too large for {model}: about {_count(prompt)} tokens "
        f"({_size(len(text.encode()))}), but its context window is {_count(window)} tokens, "
        f"{_count(fixed)} of them taken by the system prompt and tools and {_count(reply)} kept "
        "for the reply; shorten the prompt or choose a model with a larger window",
        {"promptTokens": prompt, "contextWindow": window, "fixedTokens": fixed},
    )


def _count(tokens: int) -> str:
    return f"{tokens / 1_000_000:.1f}M" if tokens >= 1_000_000 else f"{tokens / 1000:.1f}k"


def _size(size: int) -> str:
    return f"{size / 1_048_576:.1f} MB" if size >= 1_048_576 else f"{size / 1024:.0f} KB"


def cut_index(messages: list[Message], keep_tokens: int) -> int:
    """Index of the first kept message: about ``keep_tokens`` of recent context, always the
    latest user message and what follows it, never starting at a tool result."""
    kept = 0
    cut = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        kept += len(msgspec.json.encode(messages[index])) // 4
        if kept > keep_tokens:
            break
        cut = index
    while cut < len(messages) and isinstance(messages[cut], ToolResultMessage):
        cut += 1
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=cut)
    return min(cut, last_user)


class CompactionSettings(msgspec.Struct, frozen=True):
    """The ``[compaction]`` section: when and how much to compact."""

    context_window: int | None = None
    keep_tokens: int = 20_000
    reserve_tokens: int = 16_384

    def over_threshold(self, messages: list[Message]) -> bool:
        """Whether the next call would pass the window minus the reserve."""
        if not self.context_window:
            return False
        return context_tokens(messages) > self.context_window - self.reserve_tokens


def summary_request(model: str, older: list[Message], instructions: str | None) -> ProviderRequest:
    """The model call that summarises ``older`` (``instructions``: what to focus on)."""
    transcript = "\n\n".join(_render(m) for m in older)
    ask = "Summarise this conversation for a handover."
    if instructions:
        ask += f" Focus: {instructions}"
    prompt = UserMessage(
        id="compact", content=[TextContent(text=f"{ask}\n\n{transcript}")], timestamp=0.0
    )
    return ProviderRequest(
        model=model, system_prompt=SUMMARY_PROMPT, messages=[prompt], max_tokens=4096
    )


async def summarise(provider: Provider, request: ProviderRequest) -> tuple[str | None, str | None]:
    """Run the summary call: ``(summary, None)`` or ``(None, error)``."""
    end: StreamEnd | None = None
    async with contextlib.aclosing(provider.stream(request)) as stream:
        async for item in stream:
            if isinstance(item, StreamEnd):
                end = item
    if end is None or end.message.stop_reason == "error":
        return None, (end.message.error_message if end else None) or "summary failed"
    text = end.message.text().strip()
    return (SUMMARY_PREFIX + text, None) if text else (None, "the model returned no summary")


def _render(message: Message) -> str:
    """A plain-text line-up of one message for the summariser."""
    if isinstance(message, UserMessage):
        body = " ".join(b.text for b in message.content if isinstance(b, TextContent))
        return f"USER: {body}"
    if isinstance(message, AssistantMessage):
        calls = "".join(
            f"\n[tool call {c.name} {msgspec.json.encode(c.arguments).decode()[:2000]}]"
            for c in message.tool_calls()
        )
        return f"ASSISTANT: {message.text()}{calls}"
    text = " ".join(b.text for b in message.content if isinstance(b, TextContent))
    flag = " (error)" if message.is_error else ""
    return f"TOOL RESULT {message.tool_name}{flag}: {text[:4000]}"


class Compactor:
    """Compacts one session's context (see the module docstring); ``settings`` may be replaced
    (the context window becomes known when a loaded session's model is resolved)."""

    def __init__(
        self, settings: CompactionSettings, file: SessionFile, emit: Callable[[Event], None]
    ) -> None:
        self.settings = settings
        self._file = file
        self._emit = emit

    def learn_context_window(self, window: int | None) -> None:
        """The model's context window, once known (a loaded session's model was resolved);
        a configured ``context_window`` stays."""
        if self.settings.context_window is None and window is not None:
            self.settings = msgspec.structs.replace(self.settings, context_window=window)

    async def compact(
        self,
        provider: Provider,
        model: str,
        messages: list[Message],
        reason: Reason,
        instructions: str | None = None,
    ) -> tuple[CompactResult, list[Message] | None]:
        """Summarise ``messages`` before the cut with ``model``; record the compaction in the
        file. Returns the result and the new context (None when nothing was compacted);
        ``messages`` is not changed. Emits ``compaction_start`` and ``compaction_end``; a
        failed write ends the compaction (``compaction_end`` with the error) and is raised."""
        cut = cut_index(messages, self.settings.keep_tokens)
        self._emit(CompactionStart(reason=reason))
        before = estimate_tokens(messages)
        summary: str | None = None
        error: str | None = "nothing to compact"
        if 0 < cut < len(messages):
            request = summary_request(model, messages[:cut], instructions)
            summary, error = await summarise(provider, request)
        if summary is None:
            self._emit(CompactionEnd(reason=reason, tokens_before=before, error=error))
            return CompactResult(compacted=False, tokens_before=before, tokens_after=before), None
        first_kept = messages[cut].id
        try:
            self._file.append_compaction(summary, first_kept, before)
        except StoreWriteFailed as exc:
            self._emit(CompactionEnd(reason=reason, tokens_before=before, error=exc.message))
            raise
        context = self._file.messages()
        end = CompactionEnd(
            reason=reason, summary=summary, tokens_before=before, first_kept_entry_id=first_kept
        )
        self._emit(end)
        after = estimate_tokens(context)
        result = CompactResult(
            compacted=True, tokens_before=before, tokens_after=after, summary=summary
        )
        return result, context


class SessionCompaction:
    """A session's compaction as its agent (:meth:`transform`, the loop's
    ``transform_context``) and ``session/compact`` (:meth:`compact`) call it: on the model of
    the run in progress, in the ``compacting`` phase, the ``pre_compact`` hooks told first
    (they cannot stop it), a failed write handed to the sink."""

    def __init__(
        self, compactor: Compactor, run: RunState, hooks: SessionHooks | None, sink: SessionSink
    ) -> None:
        self.compactor, self._run, self._hooks, self._sink = compactor, run, hooks, sink

    async def transform(
        self, messages: list[Message], reason: CompactReason, binding: ModelBinding
    ) -> list[Message] | None:
        """On overflow, or on threshold when the context is large, the compacted context for
        the loop to adopt (None: keep it)."""
        if reason == "threshold" and not self.compactor.settings.over_threshold(messages):
            return None
        with self._run.during("compacting"):
            _, context = await self.compact(messages, binding, reason)
        return context

    async def compact(
        self,
        messages: list[Message],
        binding: ModelBinding,
        reason: Reason,
        instructions: str | None = None,
    ) -> tuple[CompactResult, list[Message] | None]:
        """Compact ``messages`` with ``binding``'s model (the caller holds the phase)."""
        if self._hooks is not None and self._hooks.wants("pre_compact"):
            await self._hooks.fire(HookInput(event="pre_compact"))
        try:
            return await self.compactor.compact(
                binding.provider, binding.model, messages, reason, instructions
            )
        except StoreWriteFailed as exc:
            self._sink.write_failed(exc)
