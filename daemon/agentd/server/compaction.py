"""Context compaction: summarise older messages into a ``compaction`` entry.

The messages before a cut point are summarised by the session's own model; the session file gets
a ``compaction`` entry (summary, first kept entry id, tokens before) and the agent's context
becomes *summary + the kept recent messages*. The cut keeps about ``keep_tokens`` of recent
context and never separates a tool result from the call it answers.

Triggers: ``session/compact`` (manual); before an LLM call when the estimated context passes the
model's window minus a reserve (threshold); once on a context-overflow error, after which the turn
is retried (overflow).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Literal

import msgspec

from agentd.errors import InvalidParams
from agentd.messages import estimate_tokens
from agentd.protocol.content import (
    AssistantMessage,
    Message,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from agentd.protocol.events import CompactionEnd, CompactionStart
from agentd.protocol.methods import CompactResult
from agentd.providers.base import ProviderRequest, StreamEnd

if TYPE_CHECKING:
    from agentd.agent import Agent
    from agentd.server.runtime import SessionRuntime

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


def _prompt_too_large(agent: Agent, text: str, window: int, reserve: int) -> PromptTooLarge | None:
    """The error for a prompt that cannot fit ``window`` (see
    :meth:`Compactor.check_prompt_fits`), or None."""
    fixed = (len(agent.system_prompt) + len(msgspec.json.encode(agent.tool_specs))) // 4
    prompt = len(text.encode()) // 4
    reply = min(reserve, window // 4)
    if fixed + prompt + reply <= window:
        return None
    return PromptTooLarge(
        f"the prompt is too large for {agent.model}: about {_count(prompt)} tokens "
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


class Compactor:
    """The :data:`agentd.agent.Compactor` of one session, also used by ``session/compact``."""

    def __init__(
        self,
        runtime: SessionRuntime,
        *,
        context_window: int | None,
        keep_tokens: int = 20_000,
        reserve_tokens: int = 16_384,
    ) -> None:
        self.runtime = runtime
        self.context_window = context_window
        self.keep_tokens = keep_tokens
        self.reserve_tokens = reserve_tokens

    async def __call__(self, reason: str) -> bool:
        """Agent hook: compact on overflow, or on threshold when the context is too large."""
        if reason == "threshold" and not self.over_threshold():
            return False
        result = await self.compact("overflow" if reason == "overflow" else "threshold")
        return result.compacted

    def check_prompt_fits(self, text: str) -> None:
        """Raise :class:`PromptTooLarge` (with the sizes) when the system prompt, the tool
        specs, ``text`` and room for a reply (the reserve, at most a quarter of the window)
        exceed the context window: compaction can shrink the conversation, never these. No
        check when the window is unknown."""
        if self.context_window:
            error = _prompt_too_large(
                self.runtime.agent, text, self.context_window, self.reserve_tokens
            )
            if error is not None:
                raise error

    def over_threshold(self) -> bool:
        if not self.context_window:
            return False
        limit = self.context_window - self.reserve_tokens
        return context_tokens(self.runtime.agent.messages) > limit

    async def compact(self, reason: Reason, instructions: str | None = None) -> CompactResult:
        """Summarise everything before the cut; emits compaction_start/compaction_end."""
        runtime = self.runtime
        messages = runtime.agent.messages
        cut = cut_index(messages, self.keep_tokens)
        runtime.emit(CompactionStart(reason=reason))
        before = estimate_tokens(messages)
        if cut == 0 or cut >= len(messages):
            runtime.emit(
                CompactionEnd(reason=reason, tokens_before=before, error="nothing to compact")
            )
            return CompactResult(compacted=False, tokens_before=before, tokens_after=before)
        summary, error = await self._summarise(messages[:cut], instructions)
        if summary is None:
            runtime.emit(CompactionEnd(reason=reason, tokens_before=before, error=error))
            return CompactResult(compacted=False, tokens_before=before, tokens_after=before)
        first_kept = messages[cut].id
        runtime.file.append_compaction(summary, first_kept, before)
        runtime.agent.messages[:] = runtime.file.messages()
        after = estimate_tokens(runtime.agent.messages)
        runtime.emit(
            CompactionEnd(
                reason=reason, summary=summary, tokens_before=before, first_kept_entry_id=first_kept
            )
        )
        return CompactResult(
            compacted=True, tokens_before=before, tokens_after=after, summary=summary
        )

    async def _summarise(
        self, older: list[Message], instructions: str | None
    ) -> tuple[str | None, str | None]:
        """Ask the session's model for the summary; (summary, None) or (None, error)."""
        agent = self.runtime.agent
        transcript = "\n\n".join(_render(m) for m in older)
        ask = "Summarise this conversation for a handover."
        if instructions:
            ask += f" Focus: {instructions}"
        request = ProviderRequest(
            model=agent.model,
            system_prompt=SUMMARY_PROMPT,
            messages=[
                UserMessage(
                    id="compact",
                    content=[TextContent(text=f"{ask}\n\n{transcript}")],
                    timestamp=0.0,
                )
            ],
            max_tokens=4096,
        )
        end: StreamEnd | None = None
        async with contextlib.aclosing(agent.provider.stream(request)) as stream:
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
